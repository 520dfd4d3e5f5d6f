package api

import (
	"sort"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/api/openapi"
)

// TestRoutesMatchOpenAPI keeps the served routes and the published
// document in step: every documented operation is served, and every
// served route (but the documents themselves) is documented.
func TestRoutesMatchOpenAPI(t *testing.T) {
	s := New(Config{})
	served := map[string]bool{}
	for _, p := range s.Routes() {
		served[p] = true
	}
	documented := map[string]bool{}
	for _, op := range openapi.Operations() {
		key := strings.ToUpper(op.Method) + " " + op.Path
		documented[key] = true
		if !served[key] {
			t.Errorf("documented but not served: %s", key)
		}
	}
	var extra []string
	for p := range served {
		if !documented[p] && p != "GET /openapi.json" && p != "GET /docs" {
			extra = append(extra, p)
		}
	}
	sort.Strings(extra)
	for _, p := range extra {
		t.Errorf("served but not documented: %s", p)
	}
}
