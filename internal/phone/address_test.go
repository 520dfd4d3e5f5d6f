package phone

import "testing"

// Numbers a carrier or provider writes in any of its forms come out as the
// digits accounts and recipients are kept as; what is not an international
// number stays as it was written.
func TestAddress(t *testing.T) {
	for in, want := range map[string]string{
		"15550001111":    "15550001111",
		"+15550001111":   "15550001111",
		"0015550001111":  "15550001111",
		"+0015550001111": "+0015550001111", // neither form: kept as written
		" +15550001111 ": "15550001111",
		"++15550001111":  "++15550001111",
		"015550001111":   "015550001111", // a national trunk prefix: the country is unknown
		"12345":          "12345",        // a short code
		"BetaShop":       "BetaShop",
		"agent@rbm.goog": "agent@rbm.goog",
		"00":             "00",
		"+":              "+",
		"":               "",
		"+1555000111a":   "+1555000111a",
		"00015550001111": "00015550001111",
	} {
		if got := Address(in); got != want {
			t.Errorf("Address(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSMPPAddress(t *testing.T) {
	cases := []struct {
		addr string
		ton  byte
		want string
	}{
		{"+15550001111", TONInternational, "15550001111"},
		{"15550001111", TONInternational, "15550001111"},
		{"+15550001111", TONUnknown, "15550001111"},
		{"0015550001111", TONUnknown, "15550001111"},
		{"15550001111", TONUnknown, "15550001111"},
		{"07700900123", TONNational, "07700900123"},
		{"+15550001111", TONNational, "+15550001111"},
		{"BetaShop", TONAlphanumeric, "BetaShop"},
		{"+15550001111", TONAlphanumeric, "+15550001111"},
		{"12345", TONAbbreviated, "12345"},
	}
	for _, c := range cases {
		if got := SMPPAddress(c.addr, c.ton); got != c.want {
			t.Errorf("SMPPAddress(%q, %d) = %q, want %q", c.addr, c.ton, got, c.want)
		}
	}
}
