package domain

import "testing"

func TestDefaultPrices(t *testing.T) {
	p := DefaultPrices()
	if got := p.SMS("55", "55", 2); got != 2*micro {
		t.Errorf("home SMS 2 segments = %d", got)
	}
	if got := p.SMS("1", "55", 3); got != 6*micro {
		t.Errorf("abroad SMS 3 segments = %d", got)
	}
	if got := p.RCS("44", "55"); got != micro {
		t.Errorf("RCS = %d", got)
	}
	if p.WhatsApp("55", "55", true) != 2*micro || p.WhatsApp("55", "55", false) != 0 {
		t.Errorf("WhatsApp prices wrong")
	}
}

func TestParsePricesOverrides(t *testing.T) {
	p, err := ParsePrices(`{"countries":{"44":{"smsSegment":1500000,"rcsMessage":500000}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.SMS("44", "1", 2); got != 3*micro {
		t.Errorf("override SMS = %d", got)
	}
	if got := p.SMS("49", "1", 1); got != 2*micro {
		t.Errorf("abroad default kept = %d", got)
	}
	if _, err := ParsePrices(`{`); err == nil {
		t.Error("bad JSON accepted")
	}
}

// BenchmarkPriceList shows what a send saves by reading the table parsed
// when the account was read instead of parsing its JSON.
func BenchmarkPriceList(b *testing.B) {
	raw := `{"home":{"smsSegment":900000},"countries":{"44":{"smsSegment":1500000,"rcsMessage":500000},"1":{"smsSegment":2500000}}}`
	parsed, err := ParsePrices(raw)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		a    Account
	}{{"parsed when read", Account{Prices: raw, PriceTable: &parsed}}, {"parsed per send", Account{Prices: raw}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.a.PriceList(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestPriceListPrefersTheParsedTable(t *testing.T) {
	table := Prices{Home: Rates{SMSSegment: 7}}
	if p, err := (&Account{Prices: `{`, PriceTable: &table}).PriceList(); err != nil || p.Home.SMSSegment != 7 {
		t.Errorf("with a parsed table: %+v, %v", p, err)
	}
	if p, err := (&Account{Prices: `{"home":{"smsSegment":3}}`}).PriceList(); err != nil || p.Home.SMSSegment != 3 || p.Abroad.SMSSegment != 2*micro {
		t.Errorf("parsed now: %+v, %v", p, err)
	}
	if _, err := (&Account{Prices: `{`}).PriceList(); err == nil {
		t.Error("a table that does not parse gave prices")
	}
}
