package phone

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in      string
		cc      string
		wantErr error
	}{
		{"5511999990000", "55", nil},
		{"447911123456", "44", nil},
		{"14155552671", "1", nil},
		{"4915123456789", "49", nil},
		{"5511999990001", "55", nil},
		{"+5511999990000", "55", nil},
		{"++5511999990000", "", ErrFormat},
		{"55+11999990000", "", ErrFormat},
		{"5511999990000+", "", ErrFormat},
		{"+ 5511999990000", "", ErrFormat},
		{"+", "", ErrFormat},
		{"55 11 99999 0000", "", ErrFormat},
		{"1234567", "", ErrFormat},
		{"1234567890123456", "", ErrFormat},
		{"05511999990000", "", ErrFormat},
		{"5500000000000", "", ErrInvalid},
		{"99912345678", "", ErrInvalid},
		{"4412", "", ErrFormat},
	}
	for _, c := range cases {
		n, err := Parse(c.in)
		if !errors.Is(err, c.wantErr) {
			t.Errorf("Parse(%q) error = %v, want %v", c.in, err, c.wantErr)
			continue
		}
		if err == nil && n.CountryCode != c.cc {
			t.Errorf("Parse(%q) country = %q, want %q", c.in, n.CountryCode, c.cc)
		}
		if err == nil && n.Digits != strings.TrimPrefix(c.in, "+") {
			t.Errorf("Parse(%q) digits = %q, want them without the +", c.in, n.Digits)
		}
	}
}

func TestValidatorMatchesParse(t *testing.T) {
	v := NewValidator(3)
	for round := 0; round < 2; round++ {
		for _, in := range []string{"5511999990000", "+5511999990000", "++5511999990000", "12ab", "5500000000000", "447911123456", "14155552671"} {
			want, werr := Parse(in)
			got, gerr := v.Parse(in)
			if got != want || !errors.Is(gerr, werr) {
				t.Fatalf("%s: cached %v %v, direct %v %v", in, got, gerr, want, werr)
			}
		}
	}
	if len(v.cache) > 3 {
		t.Fatalf("cache grew past its bound: %d", len(v.cache))
	}
}
