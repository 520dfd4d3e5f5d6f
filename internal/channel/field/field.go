// Package field collects what is wrong with the fields of a rich message,
// each problem named by its path (e.g. "list.sections[1].rows[3].title"),
// for the channel packages that check WhatsApp and RCS content.
package field

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/msgsvc/msgsvc/internal/phone"
)

// Problem is one refused field.
type Problem struct {
	Field   string
	Message string
}

// Button is a button or suggestion of a rich message as the integrator
// gave it: a reply (type reply), a link (url) or a call; each channel
// checks it against its platform's rules.
type Button struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Payload string `json:"payload"`
	URL     string `json:"url"`
	Phone   string `json:"phone"`
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

// URL checks a required link that a button opens: an absolute http or
// https URL of at most max characters. Plain http is allowed: the
// recipient's phone opens it, not us.
func (c *Checker) URL(field, v string, max int) {
	u, err := url.Parse(v)
	switch {
	case v == "":
		c.Add(field, "is required")
	case len(v) > max:
		c.Add(field, "must be at most %d characters", max)
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
		c.Add(field, "must be an absolute http or https URL")
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
