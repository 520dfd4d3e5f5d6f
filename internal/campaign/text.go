package campaign

import (
	"fmt"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// Template is a campaign's text with {{column}} placeholders, filled per
// recipient from the row's columns.
type Template struct {
	parts []part
	names []string
}

type part struct {
	text string
	name string // "" for literal text
}

// ParseTemplate reads a text such as "Hi {{name}}"; every name must be a
// column of the file (columns, compared case-insensitively), else the text
// is refused before anything is sent. "to" names the recipient's number.
func ParseTemplate(text string, columns []string) (Template, error) {
	byKey := map[string]string{"to": "to"}
	for _, c := range columns {
		byKey[strings.ToLower(c)] = c
	}
	var t Template
	seen := map[string]bool{}
	rest := text
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			t.parts = append(t.parts, part{text: rest})
			break
		}
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			return Template{}, textError("has a {{ without its }}")
		}
		t.parts = append(t.parts, part{text: rest[:i]})
		name := strings.TrimSpace(rest[i+2 : i+j])
		col, ok := byKey[strings.ToLower(name)]
		if !ok {
			return Template{}, textError("names {{%s}}, which is not a column of the file (columns: %s)", name,
				strings.Join(append([]string{"to"}, columns...), ", "))
		}
		t.parts = append(t.parts, part{name: col})
		if !seen[col] {
			seen[col] = true
			t.names = append(t.names, col)
		}
		rest = rest[i+j+2:]
	}
	return t, nil
}

// Names are the columns the template uses, in order of first use.
func (t Template) Names() []string { return t.names }

// Fill writes the template for one row.
func (t Template) Fill(r Row) string {
	var b strings.Builder
	for _, p := range t.parts {
		switch {
		case p.name == "":
			b.WriteString(p.text)
		case p.name == "to":
			b.WriteString(r.To)
		default:
			b.WriteString(r.Vars[p.name])
		}
	}
	return b.String()
}

func textError(format string, a ...any) *domain.ValidationError {
	msg := fmt.Sprintf(format, a...)
	return &domain.ValidationError{Detail: "text " + msg, Fields: []domain.FieldError{{Field: "text", Message: msg}}}
}
