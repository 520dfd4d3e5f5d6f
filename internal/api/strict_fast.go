package api

import (
	"bytes"
	"encoding/json"
)

// plainStrict is the fast path of checkStrict: one pass over the bytes that
// says whether the body is free of what checkStrict refuses (a key twice in
// an object, an escaped control character other than newline and tab, a
// raw DEL or C1 control). It allocates only for objects with many keys and
// for keys with escapes. Malformed JSON passes here: the decoder reports
// it. When it says no, checkStrict walks the body again to name the field.
func plainStrict(b []byte) bool {
	var stack []objectKeys // open containers; nil entries are arrays
	expectKey := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '{':
			stack = append(stack, objectKeys{open: true})
			expectKey = true
		case c == '[':
			stack = append(stack, objectKeys{})
			expectKey = false
		case c == '}' || c == ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
		case c == ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1].open
		case c == '"':
			end, ok := stringEnd(b, i)
			if !ok {
				return true // malformed: left to the decoder
			}
			raw := b[i+1 : end]
			if !cleanText(raw) {
				return false
			}
			if expectKey {
				top := &stack[len(stack)-1]
				if !top.add(raw) {
					return false
				}
				expectKey = false
			}
			i = end
		case c == 0x7f:
			return false
		case c == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9f:
			return false // a C1 control, U+0080 to U+009F
		}
	}
	return true
}

// stringEnd finds the closing quote of the string starting at b[start].
func stringEnd(b []byte, start int) (int, bool) {
	for j := start + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j, true
		}
	}
	return 0, false
}

// cleanText reports whether a string's raw bytes hold no control
// character other than newline and tab, raw (DEL, C1) or escaped; raw C0
// controls are invalid JSON, which the decoder refuses.
func cleanText(raw []byte) bool {
	for k := 0; k < len(raw); k++ {
		switch {
		case raw[k] == 0x7f, raw[k] == 0xc2 && k+1 < len(raw) && raw[k+1] >= 0x80 && raw[k+1] <= 0x9f:
			return false
		case raw[k] != '\\' || k+1 >= len(raw):
			continue
		}
		k++
		switch raw[k] {
		case 'b', 'f', 'r':
			return false
		case 'u':
			if k+4 >= len(raw) {
				return true // malformed: left to the decoder
			}
			code := hexVal(raw[k+1])<<12 | hexVal(raw[k+2])<<8 | hexVal(raw[k+3])<<4 | hexVal(raw[k+4])
			if code < 0x20 && code != '\n' && code != '\t' || code >= 0x7f && code <= 0x9f {
				return false
			}
			k += 4
		}
	}
	return true
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 0
}

// objectKeys remembers the keys of one open object.
type objectKeys struct {
	open bool
	keys [][]byte
}

// add records a key and reports whether it is new in the object. Keys
// with escapes are compared decoded, so "t\u006f" is "to".
func (o *objectKeys) add(raw []byte) bool {
	key := raw
	if bytes.IndexByte(raw, '\\') >= 0 {
		var s string
		if err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s); err != nil {
			return true // malformed: left to the decoder
		}
		key = []byte(s)
	}
	for _, k := range o.keys {
		if bytes.Equal(k, key) {
			return false
		}
	}
	o.keys = append(o.keys, key)
	return true
}
