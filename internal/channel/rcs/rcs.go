// Package rcs holds the rules of the RCS Business Messaging channel: the
// seed's limits (text, suggestion buttons, carousel size) and the
// platform's own ones (suggestion text and card lengths), so that a send is
// refused at once, naming the field, instead of failing after acceptance.
package rcs

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/msgsvc/msgsvc/internal/channel/field"
)

// Limits. The first group is the seed's table; the rest are RCS Business
// Messaging's limits.
const (
	MaxText        = 1000
	MaxSuggestions = 3 // per message
	MaxCards       = 10

	// MaxCardSuggestions is RBM's limit of suggestions on one rich card;
	// the seed's 3 is about the message's own suggestion chips.
	MaxCardSuggestions = 4
	MaxSuggestionText  = 25
	MaxPostback        = 2048
	MaxURL             = 2048
	MaxCardTitle       = 200
	MaxCardDescription = 2000
)

// CapabilityTTL is how long a device's answer to "does it support RCS" is
// trusted: phones change rarely, and asking costs a request per number.
const CapabilityTTL = 7 * 24 * time.Hour

// Problem is one refused field.
type Problem = field.Problem

// Button is a suggested reply (type reply), an open-URL action (url) or a
// dial action (call).
type Button = field.Button

// Card is one rich card of a carousel.
type Card struct {
	Title       string
	Description string
	HasMedia    bool // the reference itself is checked by the caller
	Buttons     []Button
}

// Message is an RCS send as the integrator asked for it. A nil Buttons or
// Cards means the field was not given.
type Message struct {
	Text     string
	HasMedia bool
	Buttons  []Button
	Cards    []Card
}

// Check applies every rule to m and returns the problems, in field order.
func Check(m Message) []Problem {
	var c checker
	if n := utf8.RuneCountInString(m.Text); n > MaxText {
		c.Add("message", "must be at most %d characters on RCS, got %d", MaxText, n)
	}
	if m.Buttons != nil {
		if len(m.Buttons) == 0 {
			c.Add("buttons", "must list 1 to %d buttons when given", MaxSuggestions)
		}
		c.buttons("buttons", m.Buttons, MaxSuggestions)
	}
	if m.Cards != nil {
		if m.HasMedia {
			c.Add("media", "cannot be combined with cards: put the media inside a card")
		}
		switch {
		case len(m.Cards) == 0:
			c.Add("cards", "must list 1 to %d cards when given", MaxCards)
		case len(m.Cards) > MaxCards:
			c.Add("cards", "must list at most %d cards, got %d", MaxCards, len(m.Cards))
		}
		for i, card := range m.Cards {
			if i >= MaxCards {
				break
			}
			c.card(fmt.Sprintf("cards[%d]", i), card)
		}
	}
	return c.Problems
}

type checker struct{ field.Checker }

func (c *checker) card(p string, card Card) {
	if strings.TrimSpace(card.Title) == "" && strings.TrimSpace(card.Description) == "" && !card.HasMedia {
		c.Add(p, "needs a title, a description or media")
	}
	c.Text(p+".title", card.Title, false, MaxCardTitle)
	c.Text(p+".description", card.Description, false, MaxCardDescription)
	if card.Buttons != nil {
		c.buttons(p+".buttons", card.Buttons, MaxCardSuggestions)
	}
}

func (c *checker) buttons(field string, bs []Button, max int) {
	if len(bs) > max {
		c.Add(field, "must list at most %d buttons, got %d", max, len(bs))
		return
	}
	for i, b := range bs {
		p := fmt.Sprintf("%s[%d]", field, i)
		c.Text(p+".title", b.Title, true, MaxSuggestionText)
		switch b.Type {
		case "reply":
			c.Text(p+".payload", b.Payload, true, MaxPostback)
			c.Absent(p, "url", b.URL, b.Type)
			c.Absent(p, "phone", b.Phone, b.Type)
		case "url":
			c.URL(p+".url", b.URL, MaxURL)
			c.Absent(p, "payload", b.Payload, b.Type)
			c.Absent(p, "phone", b.Phone, b.Type)
		case "call":
			c.Phone(p+".phone", b.Phone)
			c.Absent(p, "payload", b.Payload, b.Type)
			c.Absent(p, "url", b.URL, b.Type)
		case "":
			c.Add(p+".type", "is required: reply, url or call")
		default:
			c.Add(p+".type", "must be reply, url or call")
		}
	}
}
