package api

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

var strictSamples = []string{
	`{"to":"1","message":"hi","type":"SMS"}`,
	`{"to":"1","to":"2"}`,
	`{"a":{"b":1,"b":2}}`,
	`{"a":[{"x":1},{"x":2}]}`,
	`{"a":[{"x":1,"x":2}]}`,
	`{"t\u006f":"1","to":"2"}`,
	`{"m":"a\u0000b"}`,
	`{"m":"a\u001Bb"}`,
	`{"m":"a\rb"}`,
	`{"m":"a\n\tb"}`,
	`{"m":"a\u000ab\u0009"}`,
	`{"m":"a\u007fb"}`,
	"{\"m\":\"a\u0085b\"}",
	"{\"m\":\"a\x7fb\"}",
	`{"m":"\\u0000 is text"}`,
	`{"m":"é ✓ 😀"}`,
	`[{"k":1},{"k":1}]`,
	`{"a":1,"b":{"a":2}}`,
	`{"k\"q":1,"k\"q":2}`,
}

// The fast pass and the detailed walk agree on every body that is JSON.
func TestStrictFastPathAgrees(t *testing.T) {
	for _, s := range strictSamples {
		checkAgreement(t, []byte(s))
	}
}

func FuzzStrictFastPathAgrees(f *testing.F) {
	for _, s := range strictSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkAgreement(t, b) })
}

func checkAgreement(t *testing.T, b []byte) {
	t.Helper()
	// checkStrict refuses invalid UTF-8 before either pass runs (the walk
	// would see two keys whose bad bytes both became U+FFFD as one key
	// twice, the fast pass as two keys).
	if !json.Valid(b) || !utf8.Valid(b) {
		return
	}
	fast := plainStrict(b)
	var slow error
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := (walker{dec: dec}).value(""); err != nil {
		if _, ok := err.(*Problem); ok {
			slow = err
		}
	}
	if fast != (slow == nil) {
		t.Fatalf("%q: fast pass says clean=%v, the walk says %v", b, fast, slow)
	}
}

// Any body decodes into a send request or a refusal, never a panic.
func FuzzSendBody(f *testing.F) {
	for _, s := range strictSamples {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"to":"5511999990000","type":"WHATSAPP","buttons":[{"type":"reply","title":"a"}],"list":{"sections":[{"rows":[{}]}]},"cards":[{"media":{"url":"x"}}],"template":{"parameters":[1]},"fallback":{"type":"SMS"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var w sendWire
		if err := decodeJSON(b, &w); err != nil {
			if _, ok := err.(*Problem); !ok {
				t.Fatalf("%q: error %v is not a problem", b, err)
			}
			return
		}
		_ = w.request()
	})
}

// Keys that differ only in invalid bytes are refused as invalid UTF-8,
// whichever pass would have looked at them.
func TestStrictRefusesInvalidUTF8Keys(t *testing.T) {
	err := checkStrict([]byte("{\"\x8d0\":\"\",\"\x840\":\"\"}"))
	p, ok := err.(*Problem)
	if !ok || p.Code != "VALIDATION_ERROR" || !bytes.Contains([]byte(p.Detail), []byte("UTF-8")) {
		t.Fatalf("checkStrict = %v", err)
	}
}

// Invalid UTF-8 and escaped lone surrogates are refused naming the field
// they are in (the decoder would have turned either into U+FFFD).
func TestBadTextNamesTheField(t *testing.T) {
	for body, want := range map[string]string{
		"{\"to\": \"5511999990000\", \"message\": \"hi \xff there\"}":   "message",
		`{"to": "5511999990000", "message": "\ud800"}`:                  "message",
		`{"message": "ok \uD800x"}`:                                     "message",
		`{"message": "\udc00\ud800"}`:                                   "message",
		`{"to": "1", "buttons": [{"title": "a"}, {"title": "\udfff"}]}`: "buttons[1].title",
		"{\"a\": {\"b\": [1, \"\xc3\"]}}":                               "a.b[1]",
		"\"\xff\"":                                                      "body",
	} {
		err := checkStrict([]byte(body))
		p, ok := err.(*Problem)
		if !ok || p.Code != "VALIDATION_ERROR" || len(p.Errors) != 1 || p.Errors[0].Field != want {
			t.Errorf("checkStrict(%q) = %v, want VALIDATION_ERROR on %s", body, err, want)
		}
	}
	for _, body := range []string{`{"message": "\ud83d\ude00"}`, `{"message": "\\ud800"}`, `{"message": "\u00e9\u4e2d"}`, `{"message": "😀"}`} {
		if err := checkStrict([]byte(body)); err != nil {
			t.Errorf("checkStrict(%s) = %v, want nil", body, err)
		}
	}
}
