package openapi

import (
	"github.com/msgsvc/msgsvc/internal/api/view"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// jsonFields lists the JSON names of a struct's fields and which of them
// are left out when empty.
func jsonFields(t reflect.Type) (names []string, optional map[string]bool) {
	optional = map[string]bool{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
		if strings.Contains(opts, "omitempty") {
			optional[name] = true
		}
	}
	return names, optional
}

// The documented answers must have exactly the fields the server writes:
// a field added in Go and not here (or the reverse) fails this test.
func TestSchemasFollowGoTypes(t *testing.T) {
	doc := rawSpec(t)
	schema := func(path ...string) map[string]any {
		return at(t, doc, append([]string{"components", "schemas"}, path...)...).(map[string]any)
	}
	tests := []struct {
		name   string
		schema map[string]any
		goType reflect.Type
	}{
		{"Message", schema("Message"), reflect.TypeFor[view.Message]()},
		{"Campaign", schema("Campaign"), reflect.TypeFor[view.Campaign]()},
		{"CampaignCancelResult", schema("CampaignCancelResult"), reflect.TypeFor[view.CampaignCancel]()},
		{"DryRunResponse.messages[]", schema("DryRunResponse", "properties", "messages", "items"), reflect.TypeFor[view.Sent]()},
		{"OptOutList", schema("OptOutList"), reflect.TypeFor[view.OptOutPage]()},
		{"OptOut", schema("OptOut"), reflect.TypeFor[view.OptOut]()},
		{"UsageReport", schema("UsageReport"), reflect.TypeFor[view.UsageReport]()},
		{"UsageRow", schema("UsageRow"), reflect.TypeFor[view.UsageRow]()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			names, optional := jsonFields(tt.goType)
			props := at(t, tt.schema, "properties").(map[string]any)
			var documented []string
			for k := range props {
				documented = append(documented, k)
			}
			if !sameSet(names, documented) {
				t.Fatalf("Go writes %v, the schema documents %v", slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(documented)))
			}
			required := strs(t, tt.schema["required"])
			for _, n := range names {
				if got := slices.Contains(required, n); got == optional[n] {
					t.Errorf("%s: required = %v, but Go omits it when empty = %v", n, got, optional[n])
				}
			}
		})
	}
	// A real send's entries are the dry run's without the dry-run fields
	// (dueAt, when a message waits, is in both).
	names, optional := jsonFields(reflect.TypeFor[view.Sent]())
	var always []string
	for _, n := range names {
		if !optional[n] || n == "dueAt" {
			always = append(always, n)
		}
	}
	var accepted []string
	for k := range at(t, schema("AcceptedMessage"), "properties").(map[string]any) {
		accepted = append(accepted, k)
	}
	if !sameSet(accepted, always) {
		t.Errorf("AcceptedMessage documents %v, a real send writes %v", accepted, always)
	}
}

// examplesOf returns the examples of one response of an operation, by name,
// with a $ref to a component response followed.
func examplesOf(t *testing.T, doc map[string]any, path, method, status string) (resp map[string]any, examples map[string]map[string]any) {
	t.Helper()
	resp = resolveRef(t, doc, at(t, doc, "paths", path, method, "responses", status)).(map[string]any)
	examples = map[string]map[string]any{}
	for _, mt := range at(t, resp, "content").(map[string]any) {
		for name, ex := range at(t, mt, "examples").(map[string]any) {
			examples[name] = at(t, ex, "value").(map[string]any)
		}
	}
	return resp, examples
}

func TestSendRefusalsAreDocumented(t *testing.T) {
	doc := rawSpec(t)
	const send = "/api/v1/integration/messages"
	fieldsOf := func(ex map[string]any) []string {
		var out []string
		errs, _ := ex["errors"].([]any)
		for _, e := range errs {
			out = append(out, e.(map[string]any)["field"].(string))
		}
		return out
	}
	tests := []struct {
		name, path, status string
		code               string
		fields             []string // fields some example of the code names
	}{
		{"window", send, "422", "OUTSIDE_CONVERSATION_WINDOW", []string{"to"}},
		{"window batch", send, "422", "OUTSIDE_CONVERSATION_WINDOW", []string{"recipients[1]", "recipients[2]"}},
		{"daily limit", send, "429", "DAILY_LIMIT_REACHED", nil},
		{"send rate", send, "429", "RATE_LIMITED", nil},
		{"unknown template", send, "400", "VALIDATION_ERROR", []string{"template.name"}},
		{"template parameters", send, "400", "VALIDATION_ERROR", []string{"template.parameters"}},
		{"media on the wrong channel", send, "400", "VALIDATION_ERROR", []string{"media.mediaId"}},
		{"repeated recipient", send, "400", "VALIDATION_ERROR", []string{"recipients[1]"}},
		{"file too large", "/api/v1/integration/media", "413", "PAYLOAD_TOO_LARGE", nil},
		{"unsupported file", "/api/v1/integration/media", "415", "UNSUPPORTED_MEDIA_TYPE", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, examples := examplesOf(t, doc, tt.path, "post", tt.status)
			for _, ex := range examples {
				if ex["code"] == tt.code && (tt.fields == nil || slices.Equal(fieldsOf(ex), tt.fields)) {
					return
				}
			}
			t.Errorf("no %s example with code %s naming %v", tt.status, tt.code, tt.fields)
		})
	}

	// The upload's 413 covers both size limits.
	_, examples := examplesOf(t, doc, "/api/v1/integration/media", "post", "413")
	var details []string
	for _, ex := range examples {
		details = append(details, ex["detail"].(string))
	}
	for _, limit := range []string{"10485760", "5242880"} {
		if !slices.ContainsFunc(details, func(d string) bool { return strings.Contains(d, limit) }) {
			t.Errorf("no 413 example for the %s-byte limit: %v", limit, details)
		}
	}

	// DAILY_LIMIT_REACHED comes without Retry-After, so on sends the header
	// is optional; everywhere else a 429 always carries it.
	sendLimit, _ := examplesOf(t, doc, send, "post", "429")
	if h := at(t, sendLimit, "headers", "Retry-After").(map[string]any); h["required"] == true || h["$ref"] != nil {
		t.Errorf("send 429 Retry-After = %v, want an optional header of its own", h)
	}
	if got := at(t, doc, "components", "headers", "Retry-After", "required"); got != true {
		t.Errorf("shared Retry-After required = %v", got)
	}
}

// An unlimited window makes a header family show the other window; the
// header descriptions and GET /limits must say so, since /limits shows the
// windows literally and the two would otherwise look inconsistent.
func TestUnlimitedWindowsAreExplained(t *testing.T) {
	doc := rawSpec(t)
	for _, h := range []string{"X-RateLimit-Limit", "RateLimit-Limit"} {
		desc := at(t, doc, "components", "headers", h, "description").(string)
		if !strings.Contains(desc, "unlimited") || !strings.Contains(desc, "instead") {
			t.Errorf("%s does not explain the unlimited-window rule: %q", h, desc)
		}
	}
	desc := at(t, doc, "paths", "/api/v1/integration/limits", "get", "description").(string)
	if !strings.Contains(desc, `"limit": 0`) {
		t.Errorf("GET /limits does not show how an unlimited window reads: %q", desc)
	}
}

// Every send and dry-run example adds up, and the dry-run channel fields
// come as the server writes them: window with conversation, capability
// with fallback.
func TestSendExamplesAreConsistent(t *testing.T) {
	doc := rawSpec(t)
	const send = "/api/v1/integration/messages"
	var seen []string
	for _, status := range []string{"200", "202"} {
		_, examples := examplesOf(t, doc, send, "post", status)
		for name, ex := range examples {
			var sum float64
			for _, m := range ex["messages"].([]any) {
				m := m.(map[string]any)
				sum += m["credits"].(float64)
				_, window := m["conversationWindow"]
				_, fresh := m["newConversation"]
				_, capable := m["rcsCapable"]
				_, fallback := m["fallback"]
				if window != fresh || capable != fallback {
					t.Errorf("%s %s: %v has half of a pair", status, name, m)
				}
				if status == "202" && (window || capable) {
					t.Errorf("%s %s: dry-run fields in a real send: %v", status, name, m)
				}
				if fresh && m["newConversation"] == true && m["conversationWindow"] == "open" {
					t.Errorf("%s %s: a new conversation inside an open window: %v", status, name, m)
				}
				if window {
					seen = append(seen, "whatsapp")
				}
				if capable {
					seen = append(seen, "rcs")
				}
			}
			if math.Abs(sum-ex["credits"].(float64)) > 1e-9 {
				t.Errorf("%s %s: messages cost %v, credits says %v", status, name, sum, ex["credits"])
			}
		}
	}
	for _, kind := range []string{"whatsapp", "rcs"} {
		if !slices.Contains(seen, kind) {
			t.Errorf("no dry-run example shows the %s fields", kind)
		}
	}
}
