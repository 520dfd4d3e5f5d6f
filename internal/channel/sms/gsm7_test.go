package sms

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// specBasic is the GSM 03.38 default alphabet transcribed row by row from
// TS 23.038 §6.2.1, independently of the table in gsm7.go. The escape
// position 0x1B holds a placeholder that is skipped.
var specBasic = [8]string{
	"@£$¥èéùìòÇ\nØø\rÅå",
	"Δ_ΦΓΛΩΠΨΣΘΞ\x00ÆæßÉ",
	" !\"#¤%&'()*+,-./",
	"0123456789:;<=>?",
	"¡ABCDEFGHIJKLMNO",
	"PQRSTUVWXYZÄÖÑÜ§",
	"¿abcdefghijklmno",
	"pqrstuvwxyzäöñüà",
}

// specExtension is the default extension table (TS 23.038 §6.2.1.1).
var specExtension = map[byte]rune{
	0x0A: '\f', 0x14: '^', 0x28: '{', 0x29: '}', 0x2F: '\\',
	0x3C: '[', 0x3D: '~', 0x3E: ']', 0x40: '|', 0x65: '€',
}

func TestGSM7BasicTableRoundTrips(t *testing.T) {
	seen := 0
	for row, chars := range specBasic {
		runes := []rune(chars)
		if len(runes) != 16 {
			t.Fatalf("row %d has %d chars", row, len(runes))
		}
		for col, r := range runes {
			code := byte(row*16 + col)
			if code == esc {
				continue
			}
			seen++
			s := string(r)
			b, ok := EncodeGSM7(s)
			if !ok || !bytes.Equal(b, []byte{code}) {
				t.Errorf("EncodeGSM7(%q) = % X, %v; want %02X", s, b, ok, code)
			}
			if got := DecodeGSM7([]byte{code}); got != s {
				t.Errorf("DecodeGSM7(%02X) = %q; want %q", code, got, s)
			}
			if a := Analyze(s); a.Encoding != GSM7 || a.Units != 1 {
				t.Errorf("Analyze(%q) = %+v; want GSM-7, 1 unit", s, a)
			}
		}
	}
	if seen != 127 {
		t.Fatalf("checked %d basic characters, want 127", seen)
	}
}

func TestGSM7ExtensionTableRoundTrips(t *testing.T) {
	for code, r := range specExtension {
		s := string(r)
		want := []byte{esc, code}
		b, ok := EncodeGSM7(s)
		if !ok || !bytes.Equal(b, want) {
			t.Errorf("EncodeGSM7(%q) = % X, %v; want % X", s, b, ok, want)
		}
		if got := DecodeGSM7(want); got != s {
			t.Errorf("DecodeGSM7(% X) = %q; want %q", want, got, s)
		}
		if a := Analyze(s); a.Encoding != GSM7 || a.Units != 2 {
			t.Errorf("Analyze(%q) = %+v; want GSM-7, 2 units", s, a)
		}
	}
}

// TestGSM7LookupIsExactInverse checks every Unicode code point, so a rune
// wrongly accepted by gsmLookup (or a fast-path slip in gsmSeptets) shows up.
func TestGSM7LookupIsExactInverse(t *testing.T) {
	accepted := 0
	for r := rune(0); r <= utf8.MaxRune; r++ {
		code, ext, ok := gsmLookup(r)
		septets := gsmSeptets(r)
		if !ok {
			if septets != 0 {
				t.Errorf("gsmSeptets(%U) = %d for a non-GSM rune", r, septets)
			}
			continue
		}
		accepted++
		var back rune
		if ext {
			back = specExtension[code]
		} else {
			back = []rune(specBasic[code/16])[code%16]
		}
		if back != r || code == esc {
			t.Errorf("gsmLookup(%U) = %02X ext=%v, which the spec maps to %U", r, code, ext, back)
		}
		if want := map[bool]int{false: 1, true: 2}[ext]; septets != want {
			t.Errorf("gsmSeptets(%U) = %d; want %d", r, septets, want)
		}
	}
	if accepted != 127+len(specExtension) {
		t.Errorf("gsmLookup accepts %d runes; want %d", accepted, 127+len(specExtension))
	}
}

func TestEncodeGSM7(t *testing.T) {
	tests := []struct {
		in   string
		want []byte
		ok   bool
	}{
		{"", []byte{}, true},
		{"Hello", []byte{0x48, 0x65, 0x6C, 0x6C, 0x6F}, true},
		{"@$_", []byte{0x00, 0x02, 0x11}, true},
		{"5 €", []byte{0x35, 0x20, 0x1B, 0x65}, true},
		{"[a]", []byte{0x1B, 0x3C, 0x61, 0x1B, 0x3E}, true},
		{"line1\r\nline2", []byte("line1\r\nline2"), true},
		{"Grüße", []byte{0x47, 0x72, 0x7E, 0x1E, 0x65}, true},
		{"ç", nil, false},            // lower-case c cedilla is not in the table
		{"`", nil, false},            // backtick
		{"\t", nil, false},           // tab
		{"\x1b", nil, false},         // ESC is not a text character
		{"it’s", nil, false},         // curly apostrophe
		{"ok \xff", nil, false},      // invalid UTF-8
		{"hi 😀", nil, false},         // emoji
		{"Ω\u2126", nil, false},      // OHM SIGN is not GREEK CAPITAL OMEGA
		{"Δ\u2206", nil, false},      // INCREMENT is not GREEK CAPITAL DELTA
		{"A\u0391", nil, false},      // GREEK CAPITAL ALPHA looks Latin but is not GSM
		{"\u00a0", nil, false},       // no-break space
		{"Привет", nil, false},       // Cyrillic
		{"مرحبا", nil, false},        // Arabic
		{"こんにちは", nil, false},        // Japanese
		{"\u20ac\u0301", nil, false}, // € + combining acute
	}
	for _, tt := range tests {
		got, ok := EncodeGSM7(tt.in)
		if ok != tt.ok || !bytes.Equal(got, tt.want) || (tt.ok && got == nil) {
			t.Errorf("EncodeGSM7(%q) = % X, %v; want % X, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		if ok && DecodeGSM7(got) != tt.in {
			t.Errorf("DecodeGSM7(EncodeGSM7(%q)) = %q", tt.in, DecodeGSM7(got))
		}
	}
}

func TestDecodeGSM7Lenient(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, ""},
		{"trailing escape", []byte{0x61, 0x1B}, "a "},
		{"double escape", []byte{0x1B, 0x1B, 0x61}, " a"},
		{"undefined extension falls back to basic", []byte{0x1B, 0x41}, "A"},
		{"undefined extension of a Latin-1 code", []byte{0x1B, 0x01}, "£"},
		{"high-bit byte", []byte{0x61, 0x80, 0x62}, "a\uFFFDb"},
		{"escape before high-bit byte", []byte{0x1B, 0xFF}, " \uFFFD"},
		{"euro after text", []byte{0x31, 0x30, 0x1B, 0x65}, "10€"},
	}
	for _, tt := range tests {
		if got := DecodeGSM7(tt.in); got != tt.want {
			t.Errorf("%s: DecodeGSM7(% X) = %q; want %q", tt.name, tt.in, got, tt.want)
		}
	}
}
