package ledger

import (
	"github.com/msgsvc/msgsvc/internal/domain"
	"testing"
)

func TestParsePriceTable(t *testing.T) {
	m := int64(Micro)
	cases := []struct {
		name   string
		raw    string
		stored bool // a table is stored (else "" for the defaults)
		check  func(p domain.Prices) bool
		bad    bool
	}{
		{name: "empty restores the defaults", raw: `{}`, check: func(p domain.Prices) bool { return p.Home.SMSSegment == m && p.Abroad.SMSSegment == 2*m }},
		{name: "home rate, others kept", raw: `{"home":{"rcsMessage":0.25}}`, stored: true,
			check: func(p domain.Prices) bool {
				return p.Home.RCSMessage == m/4 && p.Home.SMSSegment == m && p.Home.WAConversation == 2*m
			}},
		{name: "country inherits abroad", raw: `{"abroad":{"smsSegment":2.5},"countries":{"44":{"smsSegment":3}}}`, stored: true,
			check: func(p domain.Prices) bool {
				uk := p.Countries["44"]
				return uk.SMSSegment == 3*m && uk.RCSMessage == m && uk.WAConversation == 2*m && p.SMS("1", "55", 2) == 5*m
			}},
		{name: "home country inherits home", raw: `{"home":{"smsSegment":0.5},"countries":{"55":{"rcsMessage":2}}}`, stored: true,
			check: func(p domain.Prices) bool { return p.Countries["55"].SMSSegment == m/2 && p.RCS("55", "55") == 2*m }},
		{name: "free WhatsApp", raw: `{"countries":{"1":{"waConversation":0}}}`, stored: true,
			check: func(p domain.Prices) bool {
				return p.WhatsApp("1", "55", true) == 0 && p.WhatsApp("44", "55", true) == 2*m
			}},
		{name: "negative", raw: `{"home":{"smsSegment":-1}}`, bad: true},
		{name: "absurd", raw: `{"home":{"smsSegment":1e9}}`, bad: true},
		{name: "sub-micro", raw: `{"home":{"smsSegment":0.0000001}}`, bad: true},
		{name: "string", raw: `{"home":{"smsSegment":"1"}}`, bad: true},
		{name: "unknown rate", raw: `{"home":{"mms":1}}`, bad: true},
		{name: "unknown section", raw: `{"default":{}}`, bad: true},
		{name: "plus in code", raw: `{"countries":{"+44":{}}}`, bad: true},
		{name: "long code", raw: `{"countries":{"4412":{}}}`, bad: true},
		{name: "zero code", raw: `{"countries":{"0":{}}}`, bad: true},
		{name: "two values", raw: `{} {}`, bad: true},
		{name: "not an object", raw: `[]`, bad: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stored, p, err := ParsePriceTable([]byte(c.raw), "55")
			if c.bad {
				if err == nil {
					t.Fatalf("accepted: %s", stored)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (stored != "") != c.stored || !c.check(p) {
				t.Fatalf("stored %q, prices %+v", stored, p)
			}
			// What is stored reads back as the same table.
			back, err := domain.ResolvePrices("", stored, "55")
			if err != nil || !c.check(back) {
				t.Fatalf("read back %+v, %v", back, err)
			}
		})
	}
}
