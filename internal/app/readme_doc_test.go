package app

import (
	"encoding/json"
	"fmt"
	"strings"
)

// parseDocumented reads the JSON of a documented response, in which
// "..." or "…" may stand for further members or elements.
func parseDocumented(s string) (any, error) {
	p := &docParser{s: s}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if p.ws(); p.i != len(p.s) {
		return nil, fmt.Errorf("unexpected %q after the JSON", p.s[p.i:])
	}
	return v, nil
}

type docParser struct {
	s string
	i int
}

func (p *docParser) ws() {
	for p.i < len(p.s) && strings.ContainsRune(" \t\r\n", rune(p.s[p.i])) {
		p.i++
	}
}

// elided consumes an ellipsis if one comes next.
func (p *docParser) elided() bool {
	p.ws()
	for _, e := range []string{"...", "…"} {
		if strings.HasPrefix(p.s[p.i:], e) {
			p.i += len(e)
			return true
		}
	}
	return false
}

func (p *docParser) value() (any, error) {
	p.ws()
	if p.i >= len(p.s) {
		return nil, fmt.Errorf("the JSON ends early")
	}
	switch p.s[p.i] {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		return p.str()
	}
	j := p.i
	for j < len(p.s) && !strings.ContainsRune(",]} \t\r\n", rune(p.s[j])) {
		j++
	}
	var v any
	if err := json.Unmarshal([]byte(p.s[p.i:j]), &v); err != nil {
		return nil, fmt.Errorf("%q is not a JSON value", p.s[p.i:j])
	}
	p.i = j
	return v, nil
}

func (p *docParser) str() (string, error) {
	j := p.i + 1
	for j < len(p.s) && p.s[j] != '"' {
		if p.s[j] == '\\' {
			j++
		}
		j++
	}
	if j >= len(p.s) {
		return "", fmt.Errorf("a string does not end")
	}
	var v string
	if err := json.Unmarshal([]byte(p.s[p.i:j+1]), &v); err != nil {
		return "", err
	}
	p.i = j + 1
	return v, nil
}

// expect consumes one of the given bytes and says which.
func (p *docParser) expect(chars string) (byte, error) {
	p.ws()
	if p.i >= len(p.s) || !strings.ContainsRune(chars, rune(p.s[p.i])) {
		return 0, fmt.Errorf("expected one of %q at %q", chars, p.s[min(p.i, len(p.s)):])
	}
	p.i++
	return p.s[p.i-1], nil
}

func (p *docParser) object() (any, error) {
	o := docObject{members: map[string]any{}}
	more, err := p.list('}', func() error {
		if _, err := p.expect(`"`); err != nil {
			return err
		}
		p.i--
		k, err := p.str()
		if err != nil {
			return err
		}
		if _, err := p.expect(":"); err != nil {
			return err
		}
		v, err := p.value()
		if err != nil {
			return err
		}
		o.members[k], o.order = v, append(o.order, k)
		return nil
	})
	o.more = more
	if err != nil {
		return nil, err
	}
	return o, nil
}

func (p *docParser) array() (any, error) {
	a := docArray{}
	more, err := p.list(']', func() error {
		v, err := p.value()
		if err != nil {
			return err
		}
		a.items = append(a.items, v)
		return nil
	})
	a.more = more
	if err != nil {
		return nil, err
	}
	return a, nil
}

// list reads the members of an object or the items of an array, from its
// opening bracket to close; item reads one, and more reports an elision.
func (p *docParser) list(close byte, item func() error) (more bool, err error) {
	p.i++ // the opening bracket
	if p.ws(); p.i < len(p.s) && p.s[p.i] == close {
		p.i++
		return false, nil
	}
	for {
		if p.elided() {
			more = true
		} else if err := item(); err != nil {
			return more, err
		}
		c, err := p.expect("," + string(close))
		if err != nil || c == close {
			return more, err
		}
	}
}
