package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/domain"
	"math"
	"sort"
	"strings"
)

// MaxUnitPrice bounds one price in a price table, in credits: a typo of a
// few zeros should not bill a message at a fortune.
const MaxUnitPrice = 1_000_000

// priceFields are the rate names of a price table, as Rates spells
// them in JSON.
var priceFields = []string{"smsSegment", "rcsMessage", "waConversation", "waInWindow"}

// ParsePriceTable reads an operator's price table, written in credits:
//
//	{"home": {"smsSegment": 1}, "abroad": {"smsSegment": 2.5},
//	 "countries": {"44": {"smsSegment": 3, "waConversation": 1.2}}}
//
// home applies to the account's home calling code, abroad to every other
// one, and countries override both for single calling codes. A rate left
// out is not named: it comes from the layer beneath (an account's plan,
// else the defaults), and for a country from home or abroad, whichever
// that country would use otherwise. Unknown fields, negative or absurd
// prices and malformed calling codes are refused. It returns the table as
// stored (a domain.PriceSheet in micro-credits, only the rates named; ""
// when it names none) and what it resolves to over the defaults for an
// account whose home calling code is homeCountry.
func ParsePriceTable(raw []byte, homeCountry string) (string, domain.Prices, error) {
	sheet, err := ParseSheet(raw)
	if err != nil {
		return "", domain.Prices{}, err
	}
	stored, err := sheet.Encode()
	if err != nil {
		return "", domain.Prices{}, err
	}
	p, err := domain.ResolvePrices("", stored, homeCountry)
	if err != nil {
		return "", domain.Prices{}, err
	}
	return stored, p, nil
}

// ParseSheet reads a price table written in credits (ParsePriceTable)
// into the rates it names, in micro-credits.
func ParseSheet(raw []byte) (domain.PriceSheet, error) {
	var in struct {
		Home      map[string]json.RawMessage            `json:"home"`
		Abroad    map[string]json.RawMessage            `json:"abroad"`
		Countries map[string]map[string]json.RawMessage `json:"countries"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return domain.PriceSheet{}, fmt.Errorf("price table: %w", err)
	}
	if dec.More() {
		return domain.PriceSheet{}, fmt.Errorf("price table: more than one JSON value")
	}
	var out domain.PriceSheet
	var err error
	if out.Home, err = rates("home", in.Home); err != nil {
		return domain.PriceSheet{}, err
	}
	if out.Abroad, err = rates("abroad", in.Abroad); err != nil {
		return domain.PriceSheet{}, err
	}
	codes := make([]string, 0, len(in.Countries))
	for cc := range in.Countries {
		codes = append(codes, cc)
	}
	sort.Strings(codes)
	for _, cc := range codes {
		if !callingCode(cc) {
			return domain.PriceSheet{}, fmt.Errorf("countries.%s: a calling code is 1 to 3 digits, without + or a leading 0", cc)
		}
		r, err := rates("countries."+cc, in.Countries[cc])
		if err != nil {
			return domain.PriceSheet{}, err
		}
		if out.Countries == nil {
			out.Countries = map[string]domain.RateSheet{}
		}
		// A country named without rates still stands in the sheet: it is
		// priced as home or abroad would price it, a choice made visible.
		if r == nil {
			r = domain.RateSheet{}
		}
		out.Countries[cc] = r
	}
	return out, nil
}

// rates reads the rates named, in credits, as micro-credits.
func rates(path string, in map[string]json.RawMessage) (domain.RateSheet, error) {
	var out domain.RateSheet
	for k, v := range in {
		known := false
		for _, f := range priceFields {
			known = known || k == f
		}
		if !known {
			return nil, fmt.Errorf("%s.%s: unknown rate; use %s", path, k, strings.Join(priceFields, ", "))
		}
		var c float64
		if err := json.Unmarshal(v, &c); err != nil || math.IsNaN(c) || c < 0 || c > MaxUnitPrice {
			return nil, fmt.Errorf("%s.%s: must be a price in credits from 0 to %d", path, k, MaxUnitPrice)
		}
		micro, err := FromCredits(c)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", path, k, err)
		}
		if out == nil {
			out = domain.RateSheet{}
		}
		out[k] = micro
	}
	return out, nil
}

func callingCode(cc string) bool {
	if len(cc) < 1 || len(cc) > 3 || cc[0] == '0' {
		return false
	}
	for _, c := range cc {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// PriceTableJSON shows a stored price table in credits, the way
// ParsePriceTable reads it.
func PriceTableJSON(p domain.Prices) map[string]any {
	show := func(r domain.Rates) map[string]float64 {
		return map[string]float64{"smsSegment": Credits(r.SMSSegment), "rcsMessage": Credits(r.RCSMessage),
			"waConversation": Credits(r.WAConversation), "waInWindow": Credits(r.WAInWindow)}
	}
	out := map[string]any{"home": show(p.Home), "abroad": show(p.Abroad)}
	if len(p.Countries) > 0 {
		cs := map[string]any{}
		for cc, r := range p.Countries {
			cs[cc] = show(r)
		}
		out["countries"] = cs
	}
	return out
}

// SheetJSON shows a stored sheet in credits, only the rates it names, the
// way ParsePriceTable reads it ({} for none).
func SheetJSON(s domain.PriceSheet) map[string]any {
	show := func(r domain.RateSheet) map[string]float64 {
		out := make(map[string]float64, len(r))
		for k, v := range r {
			out[k] = Credits(v)
		}
		return out
	}
	out := map[string]any{}
	if len(s.Home) > 0 {
		out["home"] = show(s.Home)
	}
	if len(s.Abroad) > 0 {
		out["abroad"] = show(s.Abroad)
	}
	if len(s.Countries) > 0 {
		cs := map[string]any{}
		for cc, r := range s.Countries {
			cs[cc] = show(r)
		}
		out["countries"] = cs
	}
	return out
}
