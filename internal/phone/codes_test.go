package phone

import (
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nyaruka/phonenumbers"
)

// referenceParse is parse as it was before the calling-code table: every
// number through libphonenumber's text parser. The table must agree with it
// on every input.
func referenceParse(digits string) (Number, error) {
	if len(digits) < 8 || len(digits) > 15 || digits[0] == '0' {
		return Number{}, ErrFormat
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return Number{}, ErrFormat
		}
	}
	n, err := phonenumbers.Parse("+"+digits, "")
	if err != nil || !phonenumbers.IsValidNumber(n) {
		return Number{}, ErrInvalid
	}
	return Number{
		Digits:      digits,
		CountryCode: strconv.Itoa(int(n.GetCountryCode())),
		Region:      phonenumbers.GetRegionCodeForNumber(n),
	}, nil
}

// agreement compares the table with the reference, and, where the table
// builds the number itself, that number with the one Parse builds: equal
// numbers make every later answer equal, not only the sampled ones.
type agreement struct {
	codes           *callingCodes
	inputs, built   int
	valid, deferred int
	seen            map[string]bool
}

func newAgreement() *agreement {
	return &agreement{codes: newCallingCodes(), seen: make(map[string]bool)}
}

func (a *agreement) check(t testing.TB, s string) {
	t.Helper()
	if a.seen != nil {
		if a.seen[s] {
			return
		}
		a.seen[s] = true
	}
	a.inputs++
	want, werr := referenceParse(s)
	got, gerr := a.codes.parse(s)
	if got != want || !sameError(gerr, werr) {
		t.Fatalf("%q: table says %+v %v, reference %+v %v", s, got, gerr, want, werr)
	}
	if werr == nil {
		a.valid++
	}
	if checkFormat(s) != nil {
		return
	}
	n, _, sure := a.codes.number(s)
	if !sure {
		a.deferred++
		return
	}
	a.built++
	p, err := phonenumbers.Parse("+"+s, "")
	if n == nil {
		if err == nil {
			t.Fatalf("%q: table finds no calling code, Parse finds %v", s, p)
		}
		return
	}
	if err != nil || !sameNumber(n, p) {
		t.Fatalf("%q: table builds %v, Parse %v %v", s, n, p, err)
	}
}

// sameNumber compares every field Parse may set, presence included.
func sameNumber(a, b *phonenumbers.PhoneNumber) bool {
	return eqPtr(a.CountryCode, b.CountryCode) && eqPtr(a.NationalNumber, b.NationalNumber) &&
		eqPtr(a.Extension, b.Extension) && eqPtr(a.ItalianLeadingZero, b.ItalianLeadingZero) &&
		eqPtr(a.NumberOfLeadingZeros, b.NumberOfLeadingZeros) && eqPtr(a.RawInput, b.RawInput) &&
		eqPtr(a.CountryCodeSource, b.CountryCodeSource) &&
		eqPtr(a.PreferredDomesticCarrierCode, b.PreferredDomesticCarrierCode)
}

func eqPtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func supportedCodes() []int {
	var codes []int
	for c := range phonenumbers.GetSupportedCallingCodes() {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	return codes
}

func randomDigits(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	return string(b)
}

// For every calling code and every national length that makes 8 to 15
// digits: random national numbers, the same starting with one to three
// zeros, and with each digit 0-9 first (national prefixes: 0, 1, 8, 9x...).
func TestTableMatchesReferenceOnRandomNumbers(t *testing.T) {
	a := newAgreement()
	r := rand.New(rand.NewPCG(1, 2))
	for _, code := range supportedCodes() {
		cc := strconv.Itoa(code)
		for total := 8; total <= 15; total++ {
			l := total - len(cc)
			for i := 0; i < 20; i++ {
				a.check(t, cc+randomDigits(r, l))
			}
			for z := 1; z <= 3; z++ {
				a.check(t, cc+strings.Repeat("0", z)+randomDigits(r, l-z))
			}
			for d := '0'; d <= '9'; d++ {
				a.check(t, cc+string(d)+randomDigits(r, l-1))
				a.check(t, cc+string(d)+"0"+randomDigits(r, l-2))
			}
			a.check(t, cc+strings.Repeat("0", l))
		}
	}
	t.Logf("%d inputs, %d valid; table built %d, deferred %d to Parse", a.inputs, a.valid, a.built, a.deferred)
}

// Example numbers of every region and type are valid or nearly so: they,
// their prefixes, their extensions by a digit, and their tails rewritten
// at random reach the validity patterns that random digits rarely do.
func TestTableMatchesReferenceOnExampleNumbers(t *testing.T) {
	a := newAgreement()
	r := rand.New(rand.NewPCG(3, 4))
	var examples []string
	for _, region := range supportedRegions() {
		for typ := phonenumbers.FIXED_LINE; typ <= phonenumbers.VOICEMAIL; typ++ {
			if n := phonenumbers.GetExampleNumberForType(region, typ); n != nil {
				examples = append(examples, strings.TrimPrefix(phonenumbers.Format(n, phonenumbers.E164), "+"))
			}
		}
	}
	for code := range phonenumbers.GetSupportedGlobalNetworkCallingCodes() {
		if n := phonenumbers.GetExampleNumberForNonGeoEntity(code); n != nil {
			examples = append(examples, strings.TrimPrefix(phonenumbers.Format(n, phonenumbers.E164), "+"))
		}
	}
	sort.Strings(examples)
	for _, e := range examples {
		for l := 8; l <= len(e); l++ {
			a.check(t, e[:l])
		}
		for d := '0'; d <= '9'; d++ {
			a.check(t, e+string(d))
		}
		for k := 1; k <= 4 && k < len(e); k++ {
			for i := 0; i < 5; i++ {
				a.check(t, e[:len(e)-k]+randomDigits(r, k))
			}
		}
	}
	if a.valid < len(examples) {
		t.Errorf("only %d valid inputs from %d examples: the sample misses valid numbers", a.valid, len(examples))
	}
	t.Logf("%d examples, %d inputs, %d valid; table built %d, deferred %d to Parse", len(examples), a.inputs, a.valid, a.built, a.deferred)
}

func supportedRegions() []string {
	var regions []string
	for r := range phonenumbers.GetSupportedRegions() {
		regions = append(regions, r)
	}
	sort.Strings(regions)
	return regions
}

// Inputs chosen by hand where Parse does something beyond splitting off
// the calling code, and every 1-3 digit prefix whether known or not.
func TestTableMatchesReferenceOnEdgeCases(t *testing.T) {
	a := newAgreement()
	for _, s := range []string{
		"390612345678", "39061234567", "3906123456", "393123456789", "3900000000", "39000000000",
		"3800012345", "22500000000", "2250123456789", "22507123456",
		"14155550100", "114155550100", "1114155550100", "12025550123", "16135550123", "18095550123",
		"79123456789", "789123456789", "77012345678", "7840123456", "76000000000",
		"447911123456", "4407911123456", "4402079460000", "442079460000", "441624123456", "447624123456",
		"5511999990000", "55011999990000", "551199999000", "559011999990000", "55901299999000", "5590",
		"5491112345678", "54911155123456", "5401115123456", "540111512345678", "5411151234567",
		"4915123456789", "49015123456789", "491512345678901", "3612345678", "36061234567",
		"99912345678", "9991234567890", "80012345678", "8001234567", "80812345678", "88212345678",
		"87012345678", "97212345678", "97205012345678", "9720501234567", "86013812345678",
		"8613812345678", "8200101234567", "82101234567", "610412345678", "61412345678",
		"26212345678", "262692123456", "590590123456", "599912345678", "5999123456",
	} {
		a.check(t, s)
	}
	for p := 1; p <= 999; p++ {
		for _, tail := range []string{"00000000000", "12345678901", "01234567890", "98765432109"} {
			s := strconv.Itoa(p) + tail
			for l := 8; l <= len(s) && l <= 15; l += 3 {
				a.check(t, s[:l])
			}
		}
	}
	t.Logf("%d inputs, %d valid; table built %d, deferred %d to Parse", a.inputs, a.valid, a.built, a.deferred)
}

func TestCallingCodeOfPrefix(t *testing.T) {
	for prefix, want := range map[string]string{"447": "44", "1": "1", "1212": "1", "5511": "55", "3519": "351", "0": "", "": "", "999": ""} {
		if got := CallingCodeOf(prefix); got != want {
			t.Errorf("CallingCodeOf(%q) = %q, want %q", prefix, got, want)
		}
	}
	if RegionOf("44") != "GB" || RegionOf("x") != "" {
		t.Errorf("RegionOf wrong: %q", RegionOf("44"))
	}
}
