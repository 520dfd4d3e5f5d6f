package api

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// badText finds the first JSON string (key or value) of body that holds
// invalid UTF-8 or an escaped lone surrogate (\ud800 with no low half, or a
// low half alone), and returns the field it belongs to ("" for the body
// itself) and what is wrong. The decoder would turn either into U+FFFD
// silently, so they are found in the raw bytes, with the path of the
// field, as the walker names fields.
func badText(body []byte) (field, msg string, found bool) {
	type frame struct {
		object bool
		key    string
		index  int
	}
	var stack []frame
	expectKey := false
	path := func() string {
		var b []byte
		for _, f := range stack {
			if f.object {
				if len(b) > 0 {
					b = append(b, '.')
				}
				b = append(b, f.key...)
			} else {
				b = append(b, '[')
				b = strconv.AppendInt(b, int64(f.index), 10)
				b = append(b, ']')
			}
		}
		return string(b)
	}
	for i := 0; i < len(body); i++ {
		switch c := body[i]; c {
		case '{':
			stack = append(stack, frame{object: true})
			expectKey = true
		case '[':
			stack = append(stack, frame{})
			expectKey = false
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if len(stack) > 0 {
				if top := &stack[len(stack)-1]; top.object {
					expectKey = true
				} else {
					top.index++
				}
			}
		case '"':
			end, problem := scanString(body, i+1)
			isKey := expectKey && len(stack) > 0
			if isKey {
				stack[len(stack)-1].key = string(bytes.ToValidUTF8(body[i+1:end], []byte("?")))
				expectKey = false
			}
			if problem != "" {
				return path(), problem, true
			}
			i = end
		}
	}
	return "", "", false
}

// scanString reads a JSON string's contents from start to its closing
// quote (the returned index) and says what is wrong with them, if anything.
func scanString(b []byte, start int) (end int, problem string) {
	for i := start; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			return i, problem
		case c == '\\':
			if i+1 < len(b) && b[i+1] == 'u' {
				r, ok := hex4(b, i+2)
				if ok && r >= 0xD800 && r <= 0xDFFF && problem == "" {
					low, lok := rune(0), false
					if r <= 0xDBFF && i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
						low, lok = hex4(b, i+8)
					}
					if !lok || low < 0xDC00 || low > 0xDFFF {
						problem = "holds the escape \\u" + string(b[i+2:i+6]) + ", half of a surrogate pair with no other half: it is not a character"
					} else {
						i += 6
					}
				}
				i += 6
				continue
			}
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 && problem == "" {
				problem = "is not valid UTF-8 (at byte " + strconv.Itoa(i) + " of the body)"
			}
			i += max(n, 1)
		}
	}
	return len(b), problem
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[at:at+4]), 16, 32)
	return rune(v), err == nil
}
