package sms

import (
	"strings"
	"unicode/utf8"
)

// esc is the GSM 03.38 escape to the extension table; it is not a text
// character of its own.
const esc = 0x1B

// gsmBasic is the GSM 03.38 default alphabet indexed by septet value. It is
// read-only. Entry 0x1B is the escape code and never decodes on its own.
var gsmBasic = [128]rune{
	// 0x00
	'@', '£', '$', '¥', 'è', 'é', 'ù', 'ì', 'ò', 'Ç', '\n', 'Ø', 'ø', '\r', 'Å', 'å',
	// 0x10
	'Δ', '_', 'Φ', 'Γ', 'Λ', 'Ω', 'Π', 'Ψ', 'Σ', 'Θ', 'Ξ', esc, 'Æ', 'æ', 'ß', 'É',
	// 0x20
	' ', '!', '"', '#', '¤', '%', '&', '\'', '(', ')', '*', '+', ',', '-', '.', '/',
	// 0x30
	'0', '1', '2', '3', '4', '5', '6', '7', '8', '9', ':', ';', '<', '=', '>', '?',
	// 0x40
	'¡', 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O',
	// 0x50
	'P', 'Q', 'R', 'S', 'T', 'U', 'V', 'W', 'X', 'Y', 'Z', 'Ä', 'Ö', 'Ñ', 'Ü', '§',
	// 0x60
	'¿', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o',
	// 0x70
	'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z', 'ä', 'ö', 'ñ', 'ü', 'à',
}

// gsmExtension decodes the code that follows ESC. Only the ten characters of
// the default extension table are listed; 0 means "no character here".
func gsmExtension(code byte) rune {
	switch code {
	case 0x0A:
		return '\f'
	case 0x14:
		return '^'
	case 0x28:
		return '{'
	case 0x29:
		return '}'
	case 0x2F:
		return '\\'
	case 0x3C:
		return '['
	case 0x3D:
		return '~'
	case 0x3E:
		return ']'
	case 0x40:
		return '|'
	case 0x65:
		return '€'
	}
	return 0
}

// gsmLookup maps a rune to its GSM 03.38 code. ext reports that the code
// belongs to the extension table (sent as ESC + code, two septets). It is the
// inverse of gsmBasic/gsmExtension; the tests check that exhaustively over
// every rune.
func gsmLookup(r rune) (code byte, ext, ok bool) {
	if 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
		return byte(r), false, true
	}
	switch r {
	// ASCII punctuation that keeps its ASCII value.
	case ' ', '!', '"', '#', '%', '&', '\'', '(', ')', '*', '+', ',', '-', '.', '/',
		':', ';', '<', '=', '>', '?':
		return byte(r), false, true
	// ASCII characters that sit elsewhere in the GSM table.
	case '@':
		return 0x00, false, true
	case '$':
		return 0x02, false, true
	case '\n':
		return 0x0A, false, true
	case '\r':
		return 0x0D, false, true
	case '_':
		return 0x11, false, true
	// Latin-1 and Greek characters of the basic table.
	case '£':
		return 0x01, false, true
	case '¥':
		return 0x03, false, true
	case 'è':
		return 0x04, false, true
	case 'é':
		return 0x05, false, true
	case 'ù':
		return 0x06, false, true
	case 'ì':
		return 0x07, false, true
	case 'ò':
		return 0x08, false, true
	case 'Ç':
		return 0x09, false, true
	case 'Ø':
		return 0x0B, false, true
	case 'ø':
		return 0x0C, false, true
	case 'Å':
		return 0x0E, false, true
	case 'å':
		return 0x0F, false, true
	case 'Δ':
		return 0x10, false, true
	case 'Φ':
		return 0x12, false, true
	case 'Γ':
		return 0x13, false, true
	case 'Λ':
		return 0x14, false, true
	case 'Ω':
		return 0x15, false, true
	case 'Π':
		return 0x16, false, true
	case 'Ψ':
		return 0x17, false, true
	case 'Σ':
		return 0x18, false, true
	case 'Θ':
		return 0x19, false, true
	case 'Ξ':
		return 0x1A, false, true
	case 'Æ':
		return 0x1C, false, true
	case 'æ':
		return 0x1D, false, true
	case 'ß':
		return 0x1E, false, true
	case 'É':
		return 0x1F, false, true
	case '¤':
		return 0x24, false, true
	case '¡':
		return 0x40, false, true
	case 'Ä':
		return 0x5B, false, true
	case 'Ö':
		return 0x5C, false, true
	case 'Ñ':
		return 0x5D, false, true
	case 'Ü':
		return 0x5E, false, true
	case '§':
		return 0x5F, false, true
	case '¿':
		return 0x60, false, true
	case 'ä':
		return 0x7B, false, true
	case 'ö':
		return 0x7C, false, true
	case 'ñ':
		return 0x7D, false, true
	case 'ü':
		return 0x7E, false, true
	case 'à':
		return 0x7F, false, true
	// Extension table.
	case '\f':
		return 0x0A, true, true
	case '^':
		return 0x14, true, true
	case '{':
		return 0x28, true, true
	case '}':
		return 0x29, true, true
	case '\\':
		return 0x2F, true, true
	case '[':
		return 0x3C, true, true
	case '~':
		return 0x3D, true, true
	case ']':
		return 0x3E, true, true
	case '|':
		return 0x40, true, true
	case '€':
		return 0x65, true, true
	}
	return 0, false, false
}

// gsmSeptets is the number of septets r takes in GSM-7, or 0 if r is not
// representable.
func gsmSeptets(r rune) int {
	if ' ' <= r && r <= '~' {
		// Fast path for printable ASCII, which is all GSM except the backtick.
		switch r {
		case '`':
			return 0
		case '^', '{', '}', '\\', '[', '~', ']', '|':
			return 2
		}
		return 1
	}
	_, ext, ok := gsmLookup(r)
	switch {
	case !ok:
		return 0
	case ext:
		return 2
	}
	return 1
}

// EncodeGSM7 encodes text in the GSM 03.38 default alphabet as unpacked
// septets, one per byte (SMPP data_coding 0x00); extension characters become
// ESC (0x1B) followed by their code. ok is false, and b nil, if text holds any
// character outside the alphabet (invalid UTF-8 included).
func EncodeGSM7(text string) (b []byte, ok bool) {
	b = make([]byte, 0, len(text)+8)
	for _, r := range text {
		code, ext, found := gsmLookup(r)
		if !found {
			return nil, false
		}
		if ext {
			b = append(b, esc)
		}
		b = append(b, code)
	}
	return b, true
}

// DecodeGSM7 decodes unpacked GSM 03.38 septets. It never fails, following
// the receiver rules of TS 23.038: ESC before a code the extension table does
// not define yields the basic-table character for that code, ESC ESC and a
// trailing ESC yield a space. Bytes with the high bit set are not septets and
// decode to U+FFFD.
func DecodeGSM7(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= 0x80:
			sb.WriteRune(utf8.RuneError)
		case c != esc:
			sb.WriteRune(gsmBasic[c])
		case i+1 == len(b) || b[i+1] >= 0x80:
			sb.WriteByte(' ')
		default:
			i++
			next := b[i]
			if next == esc {
				sb.WriteByte(' ')
			} else if r := gsmExtension(next); r != 0 {
				sb.WriteRune(r)
			} else {
				sb.WriteRune(gsmBasic[next])
			}
		}
	}
	return sb.String()
}
