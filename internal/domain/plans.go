package domain

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// PricePlan is a named price table the operator sells at, shared by many
// top-level accounts. An account on a plan pays the plan's prices, except
// where its own table (its overrides) names a rate; the default plan is
// the one a new top-level account starts on.
type PricePlan struct {
	ID        string
	Name      string
	Prices    string // a PriceSheet as JSON, micro-credits; "" prices nothing (the defaults)
	Default   bool
	CreatedAt time.Time
	UpdatedAt time.Time
	// Accounts is how many accounts are on the plan (read, never written).
	Accounts int
}

// RateSheet is some of a destination's rates, in micro-credits, keyed by
// their JSON names (smsSegment, rcsMessage, waConversation, waInWindow):
// the rates a table names, the others left to the layer beneath.
type RateSheet map[string]int64

// PriceSheet is a price table that names only some rates: a plan's, or an
// account's own overrides over its plan. It is what accounts and plans
// store. A table stored whole (every rate named, as tables were stored
// before plans) is a sheet too.
type PriceSheet struct {
	Home      RateSheet            `json:"home,omitempty"`
	Abroad    RateSheet            `json:"abroad,omitempty"`
	Countries map[string]RateSheet `json:"countries,omitempty"`
}

// Empty reports whether the sheet names no rate.
func (s PriceSheet) Empty() bool {
	return len(s.Home) == 0 && len(s.Abroad) == 0 && len(s.Countries) == 0
}

// Encode is the sheet as stored: "" when it names nothing.
func (s PriceSheet) Encode() (string, error) {
	if s.Empty() {
		return "", nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("price table: %w", err)
	}
	return string(b), nil
}

// ParseSheet reads a stored sheet; "" names nothing.
func ParseSheet(raw string) (PriceSheet, error) {
	var s PriceSheet
	if raw == "" {
		return s, nil
	}
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return PriceSheet{}, fmt.Errorf("price table: %w", err)
	}
	return s, nil
}

// Codes are the calling codes the sheet names, in order.
func (s PriceSheet) Codes() []string {
	out := make([]string, 0, len(s.Countries))
	for cc := range s.Countries {
		out = append(out, cc)
	}
	sort.Strings(out)
	return out
}

func (r RateSheet) over(base Rates) Rates {
	for k, v := range r {
		switch k {
		case "smsSegment":
			base.SMSSegment = v
		case "rcsMessage":
			base.RCSMessage = v
		case "waConversation":
			base.WAConversation = v
		case "waInWindow":
			base.WAInWindow = v
		}
	}
	return base
}

// apply lays the sheet over p for an account whose home calling code is
// home: its home and abroad rates replace p's, and a country it names
// starts from the rates p had for that country (its own entry, else home
// or abroad as now laid) before its rates replace them.
func (s PriceSheet) apply(p Prices, home string) Prices {
	p.Home, p.Abroad = s.Home.over(p.Home), s.Abroad.over(p.Abroad)
	if len(s.Countries) == 0 {
		return p
	}
	countries := make(map[string]Rates, len(p.Countries)+len(s.Countries))
	for cc, r := range p.Countries {
		countries[cc] = r
	}
	for cc, r := range s.Countries {
		base, ok := countries[cc]
		if !ok {
			base = p.Abroad
			if cc == home {
				base = p.Home
			}
		}
		countries[cc] = r.over(base)
	}
	p.Countries = countries
	return p
}

// ResolvePrices is what an account pays: the defaults, its plan's sheet
// over them, and its own sheet (its overrides) over that. home is its
// home calling code.
func ResolvePrices(plan, own, home string) (Prices, error) {
	p := DefaultPrices()
	for _, raw := range []string{plan, own} {
		s, err := ParseSheet(raw)
		if err != nil {
			return Prices{}, err
		}
		p = s.apply(p, home)
	}
	return p, nil
}
