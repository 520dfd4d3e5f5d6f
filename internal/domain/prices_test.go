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
