// Package whatsapp holds the rules of the WhatsApp Business channel: the
// limits of the seed's table (text, buttons, lists, conversation window,
// daily conversations by quality tier) and the platform's own ones that
// would otherwise surface as a provider error after the integrator was
// charged (title lengths, unique ids, what may be combined).
//
// Every problem names the request field it is about, with indices, e.g.
// list.sections[1].rows[3].title.
package whatsapp

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/msgsvc/msgsvc/internal/channel/field"
)

// Limits. The first group is the seed's table; the rest are WhatsApp's
// Cloud API limits for interactive messages and templates.
const (
	MaxText         = 1000
	MaxButtons      = 3
	MaxListSections = 3
	MaxSectionRows  = 10
	MaxListRows     = 30

	MaxButtonTitle    = 20
	MaxButtonPayload  = 256
	MaxURL            = 2000
	MaxListButton     = 20
	MaxSectionTitle   = 24
	MaxRowTitle       = 24
	MaxRowDescription = 72
	MaxRowID          = 200
	MaxTemplateName   = 512
	MaxTemplateParams = 100
	MaxTemplateParam  = 1024
)

// ConversationWindow is how long after the recipient's last message a
// free-form message may be sent, and how long a conversation lasts.
const ConversationWindow = 24 * time.Hour

// DailyLimit is the number of new template-initiated conversations an
// account may open per day at a quality tier; 0 means unlimited. An
// unknown tier gets the lowest limit.
func DailyLimit(tier int) int {
	switch tier {
	case 2:
		return 10_000
	case 3:
		return 100_000
	case 4:
		return 0
	}
	return 1000
}

// Problem is one refused field.
type Problem = field.Problem

// Button is a quick reply (type reply), a link (url) or a call button.
type Button = field.Button

// List is an interactive list message.
type List struct {
	Button   string
	Sections []Section
}

// Section is one section of a list.
type Section struct {
	Title string
	Rows  []Row
}

// Row is one option of a list.
type Row struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

// Template names an approved template and the values of its placeholders.
type Template struct {
	Name       string
	Language   string
	Parameters []string
}

// Message is a WhatsApp send as the integrator asked for it. A nil
// Buttons, List or Template means the field was not given; an empty
// Buttons slice was given empty.
type Message struct {
	Text     string
	HasMedia bool // the reference itself is checked by the caller
	Buttons  []Button
	List     *List
	Template *Template
}

// Check applies every rule to m and returns the problems, in field order.
func Check(m Message) []Problem {
	var c checker
	if m.Template != nil {
		for _, f := range []struct {
			name    string
			present bool
		}{{"message", m.Text != ""}, {"media", m.HasMedia}, {"buttons", m.Buttons != nil}, {"list", m.List != nil}} {
			if f.present {
				c.Add(f.name, "cannot be combined with template: the approved template defines the whole message")
			}
		}
		c.template(*m.Template)
		return c.Problems
	}
	if n := utf8.RuneCountInString(m.Text); n > MaxText {
		c.Add("message", "must be at most %d characters on WHATSAPP, got %d", MaxText, n)
	}
	if m.Buttons != nil && m.List != nil {
		c.Add("list", "cannot be combined with buttons: a WhatsApp message has either reply buttons or a list")
	}
	if m.List != nil && m.HasMedia {
		c.Add("media", "cannot be combined with list: a WhatsApp list message has a text header only")
	}
	if m.Buttons != nil {
		c.buttons(m.Buttons)
	}
	if m.List != nil {
		c.list(*m.List)
	}
	return c.Problems
}

type checker struct{ field.Checker }

func (c *checker) buttons(bs []Button) {
	if len(bs) == 0 {
		c.Add("buttons", "must list 1 to %d buttons when given", MaxButtons)
		return
	}
	if len(bs) > MaxButtons {
		c.Add("buttons", "must list at most %d buttons on WHATSAPP, got %d", MaxButtons, len(bs))
		return
	}
	titles, payloads := map[string]int{}, map[string]int{}
	for i, b := range bs {
		p := fmt.Sprintf("buttons[%d]", i)
		c.Text(p+".title", b.Title, true, MaxButtonTitle)
		if j, dup := titles[b.Title]; dup && b.Title != "" {
			c.Add(p+".title", "repeats buttons[%d].title; WhatsApp needs distinct button titles", j)
		} else {
			titles[b.Title] = i
		}
		switch b.Type {
		case "reply":
			c.Text(p+".payload", b.Payload, true, MaxButtonPayload)
			if j, dup := payloads[b.Payload]; dup && b.Payload != "" {
				c.Add(p+".payload", "repeats buttons[%d].payload; each reply needs its own payload", j)
			} else {
				payloads[b.Payload] = i
			}
			c.Absent(p, "url", b.URL, b.Type)
			c.Absent(p, "phone", b.Phone, b.Type)
		case "url", "call":
			// WhatsApp's call-to-action messages carry exactly one button.
			if len(bs) > 1 {
				c.Add(p+".type", "a %s button must be the only button of a WhatsApp message (call to action); use reply buttons to offer several choices", b.Type)
			}
			if b.Type == "url" {
				c.URL(p+".url", b.URL, MaxURL)
				c.Absent(p, "phone", b.Phone, b.Type)
			} else {
				c.Phone(p+".phone", b.Phone)
				c.Absent(p, "url", b.URL, b.Type)
			}
			c.Absent(p, "payload", b.Payload, b.Type)
		case "":
			c.Add(p+".type", "is required: reply, url or call")
		default:
			c.Add(p+".type", "must be reply, url or call")
		}
	}
}

func (c *checker) list(l List) {
	c.Text("list.button", l.Button, true, MaxListButton)
	if len(l.Sections) == 0 {
		c.Add("list.sections", "must list 1 to %d sections", MaxListSections)
		return
	}
	if len(l.Sections) > MaxListSections {
		c.Add("list.sections", "must list at most %d sections, got %d", MaxListSections, len(l.Sections))
		return
	}
	ids := map[string]string{}
	total := 0
	for i, s := range l.Sections {
		p := fmt.Sprintf("list.sections[%d]", i)
		// WhatsApp needs a heading to tell sections apart.
		c.Text(p+".title", s.Title, len(l.Sections) > 1, MaxSectionTitle)
		switch {
		case len(s.Rows) == 0:
			c.Add(p+".rows", "must list 1 to %d rows", MaxSectionRows)
		case len(s.Rows) > MaxSectionRows:
			c.Add(p+".rows", "must list at most %d rows per section, got %d", MaxSectionRows, len(s.Rows))
		}
		total += len(s.Rows)
		for j, r := range s.Rows {
			rp := fmt.Sprintf("%s.rows[%d]", p, j)
			c.Text(rp+".id", r.ID, true, MaxRowID)
			if prev, dup := ids[r.ID]; dup && r.ID != "" {
				c.Add(rp+".id", "repeats %s.id; row ids must be unique in the list", prev)
			} else {
				ids[r.ID] = rp
			}
			c.Text(rp+".title", r.Title, true, MaxRowTitle)
			c.Text(rp+".description", r.Description, false, MaxRowDescription)
		}
	}
	if total > MaxListRows {
		c.Add("list.sections", "must hold at most %d rows in all, got %d", MaxListRows, total)
	}
}

var (
	templateName = regexp.MustCompile(`^[a-z0-9_]+$`)
	languageCode = regexp.MustCompile(`^[a-z]{2,3}(_[A-Za-z0-9]{2,4})?$`)
)

func (c *checker) template(t Template) {
	switch {
	case t.Name == "":
		c.Add("template.name", "is required")
	case len(t.Name) > MaxTemplateName:
		c.Add("template.name", "must be at most %d characters", MaxTemplateName)
	case !templateName.MatchString(t.Name):
		c.Add("template.name", "must use lower-case letters, digits and underscores only, as WhatsApp template names do")
	}
	switch {
	case t.Language == "":
		c.Add("template.language", "is required, e.g. en or pt_BR")
	case !languageCode.MatchString(t.Language):
		c.Add("template.language", "must be a WhatsApp language code such as en, en_US or pt_BR")
	}
	if len(t.Parameters) > MaxTemplateParams {
		c.Add("template.parameters", "must list at most %d values, got %d", MaxTemplateParams, len(t.Parameters))
		return
	}
	for i, v := range t.Parameters {
		p := fmt.Sprintf("template.parameters[%d]", i)
		switch {
		case strings.TrimSpace(v) == "":
			c.Add(p, "must not be empty")
		case utf8.RuneCountInString(v) > MaxTemplateParam:
			c.Add(p, "must be at most %d characters", MaxTemplateParam)
		// WhatsApp refuses such values at delivery time (error 132018).
		case strings.ContainsAny(v, "\n\t"):
			c.Add(p, "must not contain new lines or tabs")
		case strings.Contains(v, "     "):
			c.Add(p, "must not contain more than 4 consecutive spaces")
		}
	}
}
