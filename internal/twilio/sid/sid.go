// Package sid spells msgsvc's identifiers as Twilio SIDs and back: a
// message's SM… SID is its native id's 128 bits in hexadecimal, so the
// Twilio-compatible API and the native API name one message two ways and
// either spelling finds it; a number's PN… SID is derived from its account
// and number, so it needs no row of its own.
package sid

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// crockford is the alphabet of the native ids' bodies (package id).
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// Prefixes of the SIDs msgsvc answers with.
const (
	Message    = "SM"
	Account    = "AC"
	APIKey     = "SK"
	Number     = "PN"
	nativeBody = 26 // base32 characters of a native id's body
)

// FromNative spells a native id (prefix_body) as a SID with the given
// prefix: the body's 128 bits as 32 lower-case hex digits. It returns ""
// for a string that is not a native id.
func FromNative(prefix, native string) string {
	i := strings.IndexByte(native, '_')
	if i < 0 || len(native)-i-1 != nativeBody {
		return ""
	}
	var hi, lo uint64
	for _, c := range []byte(native[i+1:]) {
		v := strings.IndexByte(crockford, c)
		if v < 0 {
			return ""
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(v)
	}
	if hi>>62 != 0 { // 130 bits given; a native id has the top two clear
		return ""
	}
	var raw [16]byte
	for k := 0; k < 8; k++ {
		raw[k] = byte(hi >> (56 - 8*k))
		raw[8+k] = byte(lo >> (56 - 8*k))
	}
	return prefix + hex.EncodeToString(raw[:])
}

// ToNative is FromNative's inverse: the native id with prefix nativePrefix
// ("msg") that sid names, or "" when sid is not sidPrefix followed by 32
// hex digits. Upper-case hex is accepted, as Twilio's own patterns do.
func ToNative(sidPrefix, nativePrefix, s string) string {
	if len(s) != len(sidPrefix)+32 || !strings.HasPrefix(s, sidPrefix) {
		return ""
	}
	raw, err := hex.DecodeString(s[len(sidPrefix):])
	if err != nil {
		return ""
	}
	var hi, lo uint64
	for k := 0; k < 8; k++ {
		hi = hi<<8 | uint64(raw[k])
		lo = lo<<8 | uint64(raw[8+k])
	}
	out := make([]byte, nativeBody)
	for i := nativeBody - 1; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return nativePrefix + "_" + string(out)
}

// ForNumber is the PN… SID of an account's number: stable, and different
// for the same number in two accounts.
func ForNumber(accountID, phone string) string {
	h := sha256.Sum256([]byte("pn\x00" + accountID + "\x00" + phone))
	return Number + hex.EncodeToString(h[:16])
}

// Valid reports whether s is prefix followed by 32 hex digits.
func Valid(prefix, s string) bool {
	if len(s) != len(prefix)+32 || !strings.HasPrefix(s, prefix) {
		return false
	}
	_, err := hex.DecodeString(s[len(prefix):])
	return err == nil
}
