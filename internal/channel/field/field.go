// Package field collects what is wrong with the fields of a rich message,
// each problem named by its path (e.g. "list.sections[1].rows[3].title"),
// for the channel packages that check WhatsApp and RCS content.
package field

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/msgsvc/msgsvc/internal/phone"
)

// Problem is one refused field.
type Problem struct {
	Field   string
	Message string
}

// Checker accumulates problems.
type Checker struct{ Problems []Problem }

// Add records a problem with a formatted message.
func (c *Checker) Add(field, format string, args ...any) {
	c.Problems = append(c.Problems, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Text checks a required or optional string's length in characters.
func (c *Checker) Text(field, v string, required bool, max int) {
	n := utf8.RuneCountInString(v)
	switch {
	case strings.TrimSpace(v) == "" && required:
		c.Add(field, "is required")
	case n > max:
		c.Add(field, "must be at most %d characters, got %d", max, n)
	}
}

// Absent records a field given where the button type does not use it.
func (c *Checker) Absent(prefix, field, v, typ string) {
	if v != "" {
		c.Add(prefix+"."+field, "is not used by a %s button", typ)
	}
}

// Phone checks a required phone number (digits, country code first).
func (c *Checker) Phone(field, v string) {
	if v == "" {
		c.Add(field, "is required")
		return
	}
	if _, err := phone.Parse(v); err != nil {
		c.Add(field, "%v", err)
	}
}
