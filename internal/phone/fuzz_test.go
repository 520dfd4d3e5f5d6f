package phone

import (
	"strings"
	"testing"
)

// Any input is a number or a refusal, never a panic; a number keeps the
// digits it was given, its calling code a prefix of them.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"5511999990000", "14155550123", "447700900123", "0044", "+5511", "551199999000000000", "٥٥١١"} {
		f.Add(s)
	}
	v := NewValidator(100)
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Parse(s)
		if err != nil {
			return
		}
		if n.Digits != s || !strings.HasPrefix(s, n.CountryCode) {
			t.Fatalf("%q parsed as %+v", s, n)
		}
		if m, err := v.Parse(s); err != nil || m != n {
			t.Fatalf("%q: the validator says %+v %v", s, m, err)
		}
	})
}
