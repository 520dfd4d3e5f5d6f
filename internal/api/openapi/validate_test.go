package openapi

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// validator checks JSON values against the JSON Schema subset this document
// uses, so the tests can prove that every example matches its schema. It
// works on the raw decoded document so that it shares no code with the
// renderer it helps to test.
type validator struct {
	root map[string]any
}

func (v validator) validate(schema any, value any, at string) []string {
	s, ok := schema.(map[string]any)
	if !ok {
		return []string{at + ": schema is not an object"}
	}
	var errs []string
	fail := func(format string, args ...any) {
		errs = append(errs, at+": "+fmt.Sprintf(format, args...))
	}
	if ref, ok := s["$ref"].(string); ok {
		target, err := pointer(v.root, ref)
		if err != nil {
			fail("%v", err)
			return errs
		}
		errs = append(errs, v.validate(target, value, at)...)
	}
	if t, ok := s["type"]; ok && !typeMatches(t, value) {
		fail("type %v, got %T", t, value)
		return errs
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if reflect.DeepEqual(e, value) {
				found = true
			}
		}
		if !found {
			fail("%v not in enum %v", value, enum)
		}
	}
	if c, ok := s["const"]; ok && !reflect.DeepEqual(c, value) {
		fail("want const %v, got %v", c, value)
	}
	switch val := value.(type) {
	case string:
		n := float64(utf8.RuneCountInString(val))
		if m, ok := s["minLength"].(float64); ok && n < m {
			fail("shorter than %v", m)
		}
		if m, ok := s["maxLength"].(float64); ok && n > m {
			fail("longer than %v", m)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(val) {
			fail("%q does not match %s", val, p)
		}
		if f, _ := s["format"].(string); f == "date-time" {
			if _, err := time.Parse(time.RFC3339Nano, val); err != nil {
				fail("not a date-time: %v", err)
			}
		}
	case float64:
		if m, ok := s["minimum"].(float64); ok && val < m {
			fail("%v below minimum %v", val, m)
		}
		if m, ok := s["maximum"].(float64); ok && val > m {
			fail("%v above maximum %v", val, m)
		}
	case []any:
		if m, ok := s["minItems"].(float64); ok && float64(len(val)) < m {
			fail("fewer than %v items", m)
		}
		if m, ok := s["maxItems"].(float64); ok && float64(len(val)) > m {
			fail("more than %v items", m)
		}
		if items, ok := s["items"]; ok {
			for i, item := range val {
				errs = append(errs, v.validate(items, item, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := val[r.(string)]; !ok {
					fail("missing required %q", r)
				}
			}
		}
		if m, ok := s["minProperties"].(float64); ok && float64(len(val)) < m {
			fail("fewer than %v properties", m)
		}
		for k, pv := range val {
			if ps, ok := props[k]; ok {
				errs = append(errs, v.validate(ps, pv, at+"."+k)...)
			} else if ap, ok := s["additionalProperties"].(bool); ok && !ap {
				fail("unexpected property %q", k)
			}
		}
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, sub := range all {
			errs = append(errs, v.validate(sub, value, at)...)
		}
	}
	if anyOf, ok := s["anyOf"].([]any); ok && v.matching(anyOf, value, at) == 0 {
		fail("matches none of anyOf")
	}
	if oneOf, ok := s["oneOf"].([]any); ok {
		if n := v.matching(oneOf, value, at); n != 1 {
			fail("matches %d of oneOf, want exactly 1", n)
		}
	}
	if not, ok := s["not"]; ok && len(v.validate(not, value, at)) == 0 {
		fail("matches a schema it must not")
	}
	return errs
}

func (v validator) matching(alts []any, value any, at string) int {
	n := 0
	for _, alt := range alts {
		if len(v.validate(alt, value, at)) == 0 {
			n++
		}
	}
	return n
}

func typeMatches(t any, value any) bool {
	var types []any
	switch tt := t.(type) {
	case string:
		types = []any{tt}
	case []any:
		types = tt
	}
	for _, ty := range types {
		switch ty {
		case "null":
			if value == nil {
				return true
			}
		case "string", "boolean", "array", "object":
			want := map[any]string{"string": "string", "boolean": "bool", "array": "[]interface {}", "object": "map[string]interface {}"}[ty]
			if value != nil && reflect.TypeOf(value).String() == want {
				return true
			}
		case "number":
			if _, ok := value.(float64); ok {
				return true
			}
		case "integer":
			if f, ok := value.(float64); ok && f == math.Trunc(f) {
				return true
			}
		}
	}
	return false
}

// pointer resolves a local JSON pointer such as #/components/schemas/Message.
func pointer(root map[string]any, ref string) (any, error) {
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, fmt.Errorf("not a local reference: %q", ref)
	}
	var cur any = root
	for _, tok := range strings.Split(rest, "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%q: %q is not inside an object", ref, tok)
		}
		if cur, ok = m[tok]; !ok {
			return nil, fmt.Errorf("%q: no %q", ref, tok)
		}
	}
	return cur, nil
}

// The validator must be able to fail, or the example test proves nothing.
func TestValidatorRejects(t *testing.T) {
	root := rawSpec(t)
	v := validator{root: root}
	ref := func(name string) any { return map[string]any{"$ref": "#/components/schemas/" + name} }
	tests := []struct {
		name   string
		schema any
		value  string
		ok     bool
	}{
		{"valid sms", ref("SendRequest"), `{"to":"5511999990000","message":"hi","type":"SMS"}`, true},
		{"template instead of message", ref("SendRequest"), `{"to":"5511999990000","type":"WHATSAPP","template":{"name":"a","language":"en"}}`, true},
		{"plus sign", ref("SendRequest"), `{"to":"+5511999990000","message":"hi","type":"SMS"}`, true},
		{"two plus signs", ref("SendRequest"), `{"to":"++5511999990000","message":"hi","type":"SMS"}`, false},
		{"plus inside", ref("SendRequest"), `{"to":"55+11999990000","message":"hi","type":"SMS"}`, false},
		{"spaces", ref("SendRequest"), `{"to":"+55 11999990000","message":"hi","type":"SMS"}`, false},
		{"seven digits", ref("SendRequest"), `{"to":"1234567","message":"hi","type":"SMS"}`, false},
		{"to and recipients", ref("SendRequest"), `{"to":"5511999990000","recipients":["5511999990000"],"message":"hi","type":"SMS"}`, false},
		{"neither to nor recipients", ref("SendRequest"), `{"message":"hi","type":"SMS"}`, false},
		{"no message nor template", ref("SendRequest"), `{"to":"5511999990000","type":"SMS"}`, false},
		{"unknown channel", ref("SendRequest"), `{"to":"5511999990000","message":"hi","type":"FAX"}`, false},
		{"four buttons", ref("SendRequest"), `{"to":"5511999990000","message":"hi","type":"RCS","buttons":[{"type":"reply","title":"a","payload":"a"},{"type":"reply","title":"b","payload":"b"},{"type":"reply","title":"c","payload":"c"},{"type":"reply","title":"d","payload":"d"}]}`, false},
		{"button without payload", ref("Button"), `{"type":"reply","title":"a"}`, false},
		{"validity too short", ref("SendRequest"), `{"to":"5511999990000","message":"hi","type":"SMS","validity":59}`, false},
		{"validity not integer", ref("SendRequest"), `{"to":"5511999990000","message":"hi","type":"SMS","validity":60.5}`, false},
		{"reference too long", ref("SendRequest"), `{"to":"5511999990000","message":"hi","type":"SMS","reference":"` + strings.Repeat("r", 129) + `"}`, false},
		{"timestamp without millis", ref("Timestamp"), `"2026-11-21T10:00:00Z"`, false},
		{"timestamp with offset", ref("Timestamp"), `"2026-11-21T10:00:00.000+01:00"`, false},
		{"unknown status count", ref("StatusCounts"), `{"SENDING":0,"SENT":0,"DELIVERED":0,"READ":0,"FAILED":0,"CANCELED":0,"LOST":1}`, false},
		{"problem without code", ref("Problem"), `{"status":400}`, false},
		{"problem with unknown code", ref("Problem"), `{"status":400,"code":"OOPS"}`, false},
		{"webhook with wrong event", ref("MessageReceivedEvent"), `{"event":"delivery_status","campaignId":"c","phone":"5511999990000","message":"OK","receivedAt":"2026-11-21T10:00:00.000Z","channel":"SMS"}`, false},
		{"dry run without flag", ref("DryRunResponse"), `{"campaignId":null,"status":"SENDING","credits":1,"messages":[]}`, false},
		{"dry run window unknown", ref("DryRunResponse"), `{"dryRun":true,"campaignId":null,"status":"SENDING","credits":0,"messages":[{"messageId":null,"to":"5511999990000","status":"SENDING","segments":1,"encoding":"UTF-8","credits":0,"conversationWindow":"maybe"}]}`, false},
		{"dry run rcs capable as text", ref("DryRunResponse"), `{"dryRun":true,"campaignId":null,"status":"SENDING","credits":1,"messages":[{"messageId":null,"to":"5511999990000","status":"SENDING","segments":1,"encoding":"UTF-8","credits":1,"rcsCapable":"yes"}]}`, false},
		{"card with four buttons", ref("RichCard"), `{"title":"t","buttons":[{"type":"reply","title":"a","payload":"a"},{"type":"reply","title":"b","payload":"b"},{"type":"reply","title":"c","payload":"c"},{"type":"call","title":"Call","phone":"14155552671"}]}`, true},
		{"card with five buttons", ref("RichCard"), `{"title":"t","buttons":[{"type":"reply","title":"a","payload":"a"},{"type":"reply","title":"b","payload":"b"},{"type":"reply","title":"c","payload":"c"},{"type":"reply","title":"d","payload":"d"},{"type":"reply","title":"e","payload":"e"}]}`, false},
		{"template name with capitals", ref("TemplateRef"), `{"name":"Order Shipped","language":"en"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var value any
			if err := json.Unmarshal([]byte(tt.value), &value); err != nil {
				t.Fatal(err)
			}
			errs := v.validate(tt.schema, value, "$")
			if got := len(errs) == 0; got != tt.ok {
				t.Errorf("valid = %v, want %v; errors: %v", got, tt.ok, errs)
			}
		})
	}
}
