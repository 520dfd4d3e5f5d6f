package ledger

import "testing"

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
