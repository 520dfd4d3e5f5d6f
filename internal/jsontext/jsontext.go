// Package jsontext writes the texts of hand-made JSON byte for byte as
// encoding/json writes them, for the few hot encodings that cannot afford
// its reflection: a text it would write unchanged between quotes is
// appended as it is; any other makes the caller fall back to
// encoding/json.
package jsontext

// Plain tells that encoding/json writes s between quotes as it is:
// printable ASCII without a quote, a backslash or the characters it
// escapes for HTML (<, > and &). It declines a few texts encoding/json
// writes unchanged too (DEL, and all of UTF-8 beyond ASCII), which the
// caller then leaves to it.
func Plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// AppendString appends s between quotes. It reports whether s is Plain:
// when it is not, what was appended is not what encoding/json writes, and
// the caller encodes with it instead.
func AppendString(b []byte, s string) ([]byte, bool) {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), Plain(s)
}
