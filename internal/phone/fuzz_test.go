package phone

import (
	"errors"
	"strings"
	"testing"
)

// Any input is a number or a refusal, never a panic; a number keeps the
// digits it was given, its calling code a prefix of them. The calling-code
// table, the validator and Parse all answer as the reference does.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"5511999990000", "14155550123", "447700900123", "0044", "+5511", "551199999000000000", "٥٥١١",
		"114155550100", "390612345678", "4407911123456", "5491112345678", "99912345678", "3900000000"} {
		f.Add(s)
	}
	v := NewValidator(100)
	codes := newCallingCodes()
	f.Fuzz(func(t *testing.T, s string) {
		want, werr := referenceParse(s)
		if got, err := codes.parse(s); got != want || !errors.Is(err, werr) || (err == nil) != (werr == nil) {
			t.Fatalf("%q: table says %+v %v, reference %+v %v", s, got, err, want, werr)
		}
		n, err := Parse(s)
		if n != want || !errors.Is(err, werr) || (err == nil) != (werr == nil) {
			t.Fatalf("%q: Parse says %+v %v, reference %+v %v", s, n, err, want, werr)
		}
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
