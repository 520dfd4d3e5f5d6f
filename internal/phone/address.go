package phone

import "strings"

// Address is a number as a carrier or provider wrote it, in the form
// msgsvc keeps numbers: international digits, country code first, without
// "+". One leading "+" or a leading "00" international prefix is dropped,
// and surrounding spaces with it. Anything else (a short code, a national
// number, an alphanumeric sender, an RCS agent) is returned as written,
// spaces trimmed: it is not an international number, and guessing its
// country could hand a reply to the wrong account.
//
// Every inbound path (each adapter and the sink they share) reads the
// sender and the destination of a message through Address, so that a
// reply to "+15550001111" and one to "0015550001111" reach the account
// that holds 15550001111, and a stop word from either opts out the same
// number.
func Address(s string) string {
	s = strings.TrimSpace(s)
	switch {
	case len(s) > 1 && s[0] == '+' && international(s[1:]):
		return s[1:]
	case len(s) > 2 && strings.HasPrefix(s, "00") && international(s[2:]):
		return s[2:]
	}
	return s
}

// international reports whether s is digits that begin with a country code
// (no leading zero).
func international(s string) bool {
	if s == "" || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// SMPP's types of number (SMPP 3.4 §5.2.5), as a carrier's deliver_sm
// marks its source_addr and destination_addr.
const (
	TONUnknown       byte = 0x00
	TONInternational byte = 0x01
	TONNational      byte = 0x02
	TONAlphanumeric  byte = 0x05
	TONAbbreviated   byte = 0x06
)

// SMPPAddress is Address for an SMPP address of type of number ton. An
// international one is its digits as they are (a "+" some carriers add
// dropped); an unknown one is read as Address reads any number. National,
// subscriber, network-specific, abbreviated and alphanumeric addresses are
// kept as written: which country a national number belongs to is the
// carrier's to know, not ours, so a national sender matches no earlier
// recipient rather than a wrong one.
func SMPPAddress(addr string, ton byte) string {
	switch ton {
	case TONInternational:
		addr = strings.TrimSpace(addr)
		if len(addr) > 1 && addr[0] == '+' && international(addr[1:]) {
			return addr[1:]
		}
		return addr
	case TONUnknown:
		return Address(addr)
	}
	return addr
}
