// Package ledger prices messages. Credits are integer micro-credits
// everywhere inside msgsvc (1 credit = 1,000,000) so that sums are exact;
// only the API turns them into JSON numbers.
package ledger

import (
	"encoding/json"
	"fmt"
	"math"
)

// Micro is the number of micro-credits in one credit.
const Micro = 1_000_000

// Rates are per-destination prices in micro-credits.
type Rates struct {
	SMSSegment     int64 `json:"smsSegment"`     // per SMS segment
	RCSMessage     int64 `json:"rcsMessage"`     // per RCS message
	WAConversation int64 `json:"waConversation"` // per new template-initiated WhatsApp conversation (24 h)
	WAInWindow     int64 `json:"waInWindow"`     // per WhatsApp message inside an open conversation window
}

// Prices is an account's price table: the home-country and abroad defaults,
// and overrides per destination calling code.
type Prices struct {
	Home      Rates            `json:"home"`
	Abroad    Rates            `json:"abroad"`
	Countries map[string]Rates `json:"countries,omitempty"`
}

// Default is the contract's table: SMS 1 per segment at home and 2 abroad,
// RCS 1 per message, WhatsApp 2 per new template conversation and 0 inside
// an open window.
func Default() Prices {
	return Prices{
		Home:   Rates{SMSSegment: 1 * Micro, RCSMessage: 1 * Micro, WAConversation: 2 * Micro},
		Abroad: Rates{SMSSegment: 2 * Micro, RCSMessage: 1 * Micro, WAConversation: 2 * Micro},
	}
}

// Parse reads an account's stored price table; empty means Default.
func Parse(raw string) (Prices, error) {
	if raw == "" {
		return Default(), nil
	}
	p := Default()
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return Prices{}, fmt.Errorf("price table: %w", err)
	}
	return p, nil
}

func (p Prices) rates(dest, home string) Rates {
	if r, ok := p.Countries[dest]; ok {
		return r
	}
	if dest == home {
		return p.Home
	}
	return p.Abroad
}

// SMS prices a text of the given segments to a destination calling code.
func (p Prices) SMS(dest, home string, segments int) int64 {
	return p.rates(dest, home).SMSSegment * int64(segments)
}

// RCS prices one RCS message.
func (p Prices) RCS(dest, home string) int64 { return p.rates(dest, home).RCSMessage }

// WhatsApp prices one WhatsApp message: a new template-initiated
// conversation, or a message inside an open window.
func (p Prices) WhatsApp(dest, home string, newConversation bool) int64 {
	if newConversation {
		return p.rates(dest, home).WAConversation
	}
	return p.rates(dest, home).WAInWindow
}

// Credits turns micro-credits into the JSON number the API shows. Balances
// up to 2^53 micro-credits (9 billion credits) convert exactly enough to
// print back as the same decimal.
func Credits(micro int64) float64 {
	return math.Round(float64(micro)) / Micro
}

// FromCredits converts a decimal credit amount given by an operator, to
// micro-credits, refusing fractions below one micro-credit.
func FromCredits(v float64) (int64, error) {
	m := v * Micro
	if math.IsNaN(m) || math.IsInf(m, 0) || math.Abs(m) > 1<<53 {
		return 0, fmt.Errorf("amount %v out of range", v)
	}
	r := math.Round(m)
	if math.Abs(r-m) > 1e-6 {
		return 0, fmt.Errorf("amount %v has more than 6 decimal places", v)
	}
	return int64(r), nil
}
