package sms

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// EncodeUCS2 encodes text as UTF-16BE (SMPP data_coding 0x08). Characters
// outside the BMP become surrogate pairs, as handsets expect even though the
// coding is nominally UCS-2. Invalid UTF-8 bytes are encoded as U+FFFD.
func EncodeUCS2(text string) []byte {
	// Each UTF-8 byte sequence of n bytes yields at most 2n UTF-16 bytes.
	b := make([]byte, 0, 2*len(text))
	for _, r := range text {
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			b = append(b, byte(hi>>8), byte(hi), byte(lo>>8), byte(lo))
			continue
		}
		b = append(b, byte(r>>8), byte(r))
	}
	return b
}

// DecodeUCS2 decodes UTF-16BE. Unpaired surrogates and a dangling odd byte
// decode to U+FFFD rather than failing, because delivery receipts and MO
// messages from real SMSCs are not always well formed.
func DecodeUCS2(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for i := 0; i+1 < len(b); i += 2 {
		u := rune(b[i])<<8 | rune(b[i+1])
		if utf16.IsSurrogate(u) && u < 0xDC00 && i+3 < len(b) {
			lo := rune(b[i+2])<<8 | rune(b[i+3])
			if r := utf16.DecodeRune(u, lo); r != utf8.RuneError {
				sb.WriteRune(r)
				i += 2
				continue
			}
		}
		// WriteRune turns a lone surrogate into U+FFFD by itself.
		sb.WriteRune(u)
	}
	if len(b)%2 == 1 {
		sb.WriteRune(utf8.RuneError)
	}
	return sb.String()
}

// CheckUCS2 reports why b is not well-formed UTF-16BE: an odd length, or a
// surrogate without its pair. A sender's text is held to this (DecodeUCS2
// forgives both, for what carriers send back).
func CheckUCS2(b []byte) error {
	if len(b)%2 == 1 {
		return fmt.Errorf("UCS-2 text of %d octets, an odd number", len(b))
	}
	for i := 0; i < len(b); i += 2 {
		u := rune(b[i])<<8 | rune(b[i+1])
		if !utf16.IsSurrogate(u) {
			continue
		}
		if u < 0xDC00 && i+3 < len(b) {
			if lo := rune(b[i+2])<<8 | rune(b[i+3]); lo >= 0xDC00 && lo <= 0xDFFF {
				i += 2
				continue
			}
		}
		return fmt.Errorf("UCS-2 text has a lone surrogate 0x%04X at octet %d", u, i)
	}
	return nil
}
