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
// out keeps its default (Default) for home and abroad; for a country
// it is taken from home or abroad, whichever that country would use
// otherwise. Unknown fields, negative or absurd prices and malformed
// calling codes are refused. It returns the table as the account stores it
// (Prices, micro-credits), or "" when the table is empty (defaults).
func ParsePriceTable(raw []byte, homeCountry string) (string, domain.Prices, error) {
	var in struct {
		Home      map[string]json.RawMessage            `json:"home"`
		Abroad    map[string]json.RawMessage            `json:"abroad"`
		Countries map[string]map[string]json.RawMessage `json:"countries"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return "", domain.Prices{}, fmt.Errorf("price table: %w", err)
	}
	if dec.More() {
		return "", domain.Prices{}, fmt.Errorf("price table: more than one JSON value")
	}
	out := domain.DefaultPrices()
	var err error
	if out.Home, err = rates("home", in.Home, out.Home); err != nil {
		return "", domain.Prices{}, err
	}
	if out.Abroad, err = rates("abroad", in.Abroad, out.Abroad); err != nil {
		return "", domain.Prices{}, err
	}
	codes := make([]string, 0, len(in.Countries))
	for cc := range in.Countries {
		codes = append(codes, cc)
	}
	sort.Strings(codes)
	for _, cc := range codes {
		if !callingCode(cc) {
			return "", domain.Prices{}, fmt.Errorf("countries.%s: a calling code is 1 to 3 digits, without + or a leading 0", cc)
		}
		base := out.Abroad
		if cc == homeCountry {
			base = out.Home
		}
		r, err := rates("countries."+cc, in.Countries[cc], base)
		if err != nil {
			return "", domain.Prices{}, err
		}
		if out.Countries == nil {
			out.Countries = map[string]domain.Rates{}
		}
		out.Countries[cc] = r
	}
	if in.Home == nil && in.Abroad == nil && len(in.Countries) == 0 {
		return "", out, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", domain.Prices{}, fmt.Errorf("price table: %w", err)
	}
	return string(b), out, nil
}

// rates applies the given rates, in credits, over base.
func rates(path string, in map[string]json.RawMessage, base domain.Rates) (domain.Rates, error) {
	for k := range in {
		known := false
		for _, f := range priceFields {
			known = known || k == f
		}
		if !known {
			return base, fmt.Errorf("%s.%s: unknown rate; use %s", path, k, strings.Join(priceFields, ", "))
		}
	}
	dst := map[string]*int64{"smsSegment": &base.SMSSegment, "rcsMessage": &base.RCSMessage,
		"waConversation": &base.WAConversation, "waInWindow": &base.WAInWindow}
	for _, f := range priceFields {
		v, ok := in[f]
		if !ok {
			continue
		}
		var c float64
		if err := json.Unmarshal(v, &c); err != nil || math.IsNaN(c) || c < 0 || c > MaxUnitPrice {
			return base, fmt.Errorf("%s.%s: must be a price in credits from 0 to %d", path, f, MaxUnitPrice)
		}
		micro, err := FromCredits(c)
		if err != nil {
			return base, fmt.Errorf("%s.%s: %w", path, f, err)
		}
		*dst[f] = micro
	}
	return base, nil
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
