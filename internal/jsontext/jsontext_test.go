package jsontext

import (
	"encoding/json"
	"testing"
)

// TestAppendStringIsEncodingJSONs: for every byte, and for texts around
// it, a plain text is appended exactly as encoding/json writes it, a text
// it would write otherwise is never called plain, and every printable
// ASCII text but the escaped ones is.
func TestAppendStringIsEncodingJSONs(t *testing.T) {
	texts := []string{"", "SENT", "msg_01HZX", "+5511999990000", "Your code is 123456"}
	for c := 0; c < 256; c++ {
		texts = append(texts, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"b")
	}
	texts = append(texts, "é", "\u2028", "日本")
	for _, s := range texts {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, plain := AppendString(nil, s)
		unchanged := string(want) == `"`+s+`"`
		if plain && !unchanged {
			t.Fatalf("%q: called plain, but encoding/json writes %s", s, want)
		}
		if !plain && unchanged && asciiPrintable(s) {
			t.Fatalf("%q: printable ASCII that encoding/json writes unchanged, not called plain", s)
		}
		if plain && string(got) != string(want) {
			t.Fatalf("%q: appended %s, encoding/json writes %s", s, got, want)
		}
	}
}

func asciiPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
