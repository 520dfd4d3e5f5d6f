package ledger

import "testing"

func TestDefaultPrices(t *testing.T) {
	p := Default()
	if got := p.SMS("55", "55", 2); got != 2*Micro {
		t.Errorf("home SMS 2 segments = %d", got)
	}
	if got := p.SMS("1", "55", 3); got != 6*Micro {
		t.Errorf("abroad SMS 3 segments = %d", got)
	}
	if got := p.RCS("44", "55"); got != Micro {
		t.Errorf("RCS = %d", got)
	}
	if p.WhatsApp("55", "55", true) != 2*Micro || p.WhatsApp("55", "55", false) != 0 {
		t.Errorf("WhatsApp prices wrong")
	}
}

func TestParseOverrides(t *testing.T) {
	p, err := Parse(`{"countries":{"44":{"smsSegment":1500000,"rcsMessage":500000}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.SMS("44", "1", 2); got != 3*Micro {
		t.Errorf("override SMS = %d", got)
	}
	if got := p.SMS("49", "1", 1); got != 2*Micro {
		t.Errorf("abroad default kept = %d", got)
	}
	if _, err := Parse(`{`); err == nil {
		t.Error("bad JSON accepted")
	}
}

func TestCreditsConversion(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want int64
		ok   bool
	}{{12.5, 12_500_000, true}, {0.000001, 1, true}, {1e-7, 0, false}, {-3, -3 * Micro, true}} {
		got, err := FromCredits(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("FromCredits(%v) = %d, %v", c.in, got, err)
		}
	}
	if Credits(12_500_000) != 12.5 {
		t.Error("Credits(12.5M) != 12.5")
	}
}
