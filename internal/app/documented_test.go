package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Every status an operation can answer is in the OpenAPI document: each
// operation is probed with the requests that make handlers refuse (no key,
// a wrong key, a wrong content type, an oversized or malformed body, an
// over-long Idempotency-Key, an unknown id), and each status seen must be
// documented for it.
func TestEveryStatusIsDocumented(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]any `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(e.do("GET", "/openapi.json", "", nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	huge := `{"message":"` + strings.Repeat("a", 2<<20) + `"}`
	var problems []string
	for path, ops := range doc.Paths {
		for method, op := range ops {
			method = strings.ToUpper(method)
			url := strings.NewReplacer("{messageId}", "msg_01jd8z6t2n7h5f3d1b9z7x5v3t", "{campaignId}", "cmp_01jd8z6t2m4q9x7r5k3w1b0c8n").Replace(path)
			seen := map[int]string{}
			probe := func(what, key string, body any, headers ...string) {
				r := e.do(method, url, key, body, headers...)
				if _, ok := seen[r.status]; !ok {
					seen[r.status] = what
				}
			}
			probe("no key", "", nil)
			probe("a wrong key", "svc_test_"+strings.Repeat("x", 40), nil)
			probe("the test key", e.testKey, nil)
			if method == "POST" {
				probe("malformed JSON", e.testKey, "{", "Content-Type", "application/json")
				probe("a wrong content type", e.testKey, "x", "Content-Type", "text/plain")
				probe("an oversized body", e.testKey, huge)
				probe("an over-long Idempotency-Key", e.testKey, "{}", "Idempotency-Key", strings.Repeat("k", 256))
			}
			for status, what := range seen {
				if status == http.StatusTooManyRequests {
					continue // the env lifts rate limits: not from these probes
				}
				if _, ok := op.Responses[strconv.Itoa(status)]; !ok {
					if _, def := op.Responses["default"]; !def {
						problems = append(problems, fmt.Sprintf("%s %s answers %d to %s; the document does not list it", method, path, status, what))
					}
				}
			}
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}
