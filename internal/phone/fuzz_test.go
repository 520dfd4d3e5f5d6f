package phone

import (
	"errors"
	"strings"
	"testing"
)

// Any input is a number or a refusal, never a panic; a number keeps the
// digits it was given, its calling code a prefix of them. The calling-code
// table, the validator and Parse all answer as the reference does, for
// the input and for the input read as digits (few random strings are
// well-formed numbers, and those are where the table does its work).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"5511999990000", "14155550123", "447700900123", "0044", "+5511", "551199999000000000", "٥٥١١",
		"114155550100", "390612345678", "4407911123456", "5491112345678", "99912345678", "3900000000"} {
		f.Add(s)
	}
	v := NewValidator(100)
	codes := newCallingCodes()
	f.Fuzz(func(t *testing.T, s string) {
		for _, in := range []string{s, asDigits(s)} {
			want, werr := referenceParse(in)
			if got, err := codes.parse(in); got != want || !sameError(err, werr) {
				t.Fatalf("%q: table says %+v %v, reference %+v %v", in, got, err, want, werr)
			}
			// Parse and the validator also take one leading + (E.164's
			// written form) and answer with the digits.
			pwant, pwerr := referenceParse(strings.TrimPrefix(in, "+"))
			if got, err := Parse(in); got != pwant || !sameError(err, pwerr) {
				t.Fatalf("%q: Parse says %+v %v, reference %+v %v", in, got, err, pwant, pwerr)
			}
			if got, err := v.Parse(in); got != pwant || !sameError(err, pwerr) {
				t.Fatalf("%q: the validator says %+v %v, reference %+v %v", in, got, err, pwant, pwerr)
			}
			if werr == nil && (want.Digits != in || !strings.HasPrefix(in, want.CountryCode)) {
				t.Fatalf("%q parsed as %+v", in, want)
			}
		}
	})
}

// asDigits reads each byte as a digit, keeping at most 15, the longest
// number accepted.
func asDigits(s string) string {
	b := make([]byte, 0, 15)
	for i := 0; i < len(s) && len(b) < 15; i++ {
		b = append(b, '0'+s[i]%10)
	}
	return string(b)
}

func sameError(a, b error) bool {
	return errors.Is(a, b) && (a == nil) == (b == nil)
}
