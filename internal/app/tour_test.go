package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// TestTrafficTour walks the corners of the API that the document had wrong
// once, asserting what the server does; under MSGSVC_TEST_TRAFFIC its
// traffic is also validated against the document in CI. Input enums take
// any letter case (a channel, a status filter, a fallback or button type);
// a login without fields is a validation error naming them; a wrong method
// is 405 with Allow; redacted numbers appear in the list, the feed and a
// redelivered webhook.
func TestTrafficTour(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	key := e.testKey

	r := send(t, e, key, map[string]any{"to": "5511999990004", "message": "Lower case channel", "type": "sms", "callbackUrl": e.hooks.url()})
	mid, _ := sent(t, r)
	finalStatus(t, e, key, mid, "DELIVERED")
	if m := e.do("GET", "/api/v1/integration/messages/"+mid, key, nil).json(t); m["type"] != "SMS" || m["channel"] != "SMS" {
		t.Errorf("a send typed sms reads back %v/%v, want SMS", m["type"], m["channel"])
	}
	for _, q := range []string{"delivered", "Delivered", "DELIVERED"} {
		l := e.do("GET", "/api/v1/integration/messages?status="+q, key, nil)
		if l.status != 200 || !strings.Contains(string(l.body), mid) {
			t.Errorf("list ?status=%s: %d %s", q, l.status, l.body)
		}
	}
	if l := e.do("GET", "/api/v1/integration/messages?status=deliverd", key, nil); l.status != 400 {
		t.Errorf("list ?status=deliverd: %d, want 400", l.status)
	}
	if rr := e.do("POST", "/api/v1/integration/test/replies", key, map[string]any{"from": "5511999990004", "message": "hi", "channel": "sms"}); rr.status != 202 {
		t.Errorf("test reply on channel sms: %d %s", rr.status, rr.body)
	}
	rcs := e.do("POST", "/api/v1/integration/messages?dryRun=true", key, map[string]any{"to": "5511999990003", "message": "Card", "type": "Rcs",
		"fallback": map[string]any{"type": "sms"}, "buttons": []any{map[string]any{"type": "REPLY", "title": "Yes", "payload": "y"}}})
	if rcs.status != 200 {
		t.Errorf("an RCS dry run with mixed-case enums: %d %s", rcs.status, rcs.body)
	}
	if bad := e.do("POST", "/api/v1/integration/messages", key, map[string]any{"to": "5511999990000", "message": "x", "type": "fax"}); bad.status != 400 {
		t.Errorf("type fax: %d, want 400", bad.status)
	}

	empty := e.do("POST", "/api/v1/auth/login", "", map[string]any{})
	wantProblem(t, "login {}", empty, 400, "VALIDATION_ERROR")
	if s := string(empty.body); !strings.Contains(s, `"field":"email"`) || !strings.Contains(s, `"field":"password"`) {
		t.Errorf("login {} names %s, want email and password", s)
	}
	wantProblem(t, "login without a password", e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "a@b.example"}), 400, "VALIDATION_ERROR")
	wantProblem(t, "login with wrong credentials", e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "a@b.example", "password": "nope"}), 401, "INVALID_CREDENTIALS")

	wrong := e.do("DELETE", "/api/v1/integration/balance", key, nil)
	wantProblem(t, "DELETE balance", wrong, 405, "METHOD_NOT_ALLOWED")
	if wrong.header.Get("Allow") == "" {
		t.Error("405 without Allow")
	}

	red := e.do("POST", "/api/v1/integration/messages/"+mid+"/redact", key, nil).json(t)
	hashed, _ := red["to"].(string)
	if !compliance.Redacted(hashed) {
		t.Fatalf("redact: %v", red)
	}
	list := e.do("GET", "/api/v1/integration/messages?limit=5", key, nil)
	if !strings.Contains(string(list.body), hashed) || !strings.Contains(string(list.body), `"redacted":true`) {
		t.Errorf("the list does not show the redacted message: %s", list.body)
	}
	feed := e.do("GET", "/api/v1/integration/events", key, nil).json(t)
	var eventID string
	for _, ev := range feed["events"].([]any) {
		d := ev.(map[string]any)["data"].(map[string]any)
		if d["messageId"] == mid {
			eventID = ev.(map[string]any)["id"].(string)
			if d["phone"] != hashed {
				t.Errorf("feed phone %v, want %s", d["phone"], hashed)
			}
		}
	}
	if eventID == "" {
		t.Fatal("no event of the message in the feed")
	}
	before := len(e.hooks.all())
	dev := e.member("developer")
	if rd := e.mg("POST", "/api/v1/manage/events/"+eventID+"/redeliver", dev, nil); rd.status != 202 {
		t.Fatalf("redeliver: %d %s", rd.status, rd.body)
	}
	var again *hook
	polltest.For(t, "the redelivered webhook", 10*time.Second, func() bool {
		for _, h := range e.hooks.all()[before:] {
			if h.id == eventID {
				again = &h
				return true
			}
		}
		return false
	})
	if again.payload["phone"] != hashed {
		t.Errorf("redelivered webhook phone %v, want %s", again.payload["phone"], hashed)
	}
}

// Amounts travel as JSON numbers with at most 6 decimals: a balance with
// all six comes back digit for digit.
func TestBalanceIsExact(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{credits: 1020.123457})
	for _, path := range []string{"/api/v1/integration/balance", "/v1/account/balance"} {
		if b := e.do("GET", path, e.testKey, nil); b.status != 200 || !strings.Contains(string(b.body), `"balance":1020.123457,`) {
			t.Errorf("%s: %d %s", path, b.status, b.body)
		}
	}
}

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
