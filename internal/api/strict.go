package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// checkStrict refuses what encoding/json would quietly accept: invalid
// UTF-8 (it would become U+FFFD), a key given twice in one object (the
// last would win, so {"to":"A","to":"B"} would send to B), and control
// characters other than newline and tab inside strings. Problems name the
// field by its path (buttons[1].title). It runs before decoding, on every
// JSON body.
func checkStrict(body []byte) error {
	valid := utf8.Valid(body)
	if !valid || bytes.Contains(body, []byte(`\ud`)) || bytes.Contains(body, []byte(`\uD`)) {
		if field, msg, found := badText(body); found {
			if field == "" {
				field = "body"
			}
			return fieldError(field, msg)
		}
	}
	if !valid {
		off := invalidUTF8At(body)
		return validation(fmt.Sprintf("The request body is not valid UTF-8 (at byte %d).", off))
	}
	if plainStrict(body) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	w := walker{dec: dec}
	if err := w.value(""); err != nil {
		var p *Problem
		if errors.As(err, &p) {
			return p
		}
		return nil // malformed JSON: the decoder that follows says where
	}
	return nil
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

type walker struct{ dec *json.Decoder }

// value walks one JSON value whose path is path.
func (w walker) value(path string) error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return w.object(path)
		case '[':
			return w.array(path)
		}
	case string:
		return checkText(path, t)
	}
	return nil
}

func (w walker) object(path string) error {
	seen := map[string]bool{}
	for w.dec.More() {
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		field := key
		if path != "" {
			field = path + "." + key
		}
		if err := checkText(field, key); err != nil {
			return err
		}
		if seen[key] {
			return fieldError(field, "is given more than once; each field may appear once")
		}
		seen[key] = true
		if err := w.value(field); err != nil {
			return err
		}
	}
	_, err := w.dec.Token() // '}'
	return err
}

func (w walker) array(path string) error {
	for i := 0; w.dec.More(); i++ {
		if err := w.value(path + "[" + strconv.Itoa(i) + "]"); err != nil {
			return err
		}
	}
	_, err := w.dec.Token() // ']'
	return err
}

// checkText refuses control characters other than newline and tab.
func checkText(field, s string) error {
	for i, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			if field == "" {
				field = "body"
			}
			return fieldError(field, fmt.Sprintf("contains the control character U+%04X at position %d; only newline and tab are allowed",
				r, utf8.RuneCountInString(s[:i])))
		}
	}
	return nil
}
