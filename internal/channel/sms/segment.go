package sms

import "unicode/utf8"

// Encoding is the SMS character set a text is sent in. The values are the
// strings the API reports in the "encoding" field.
type Encoding string

const (
	GSM7 Encoding = "GSM-7"
	UCS2 Encoding = "UCS-2"
)

// MaxSegments is the most segments one message may take (docs/api.md);
// longer texts are rejected at send time, not truncated here.
const MaxSegments = 10

// Per-segment capacities, in septets (GSM-7) or UTF-16 code units (UCS-2).
// A concatenated part loses room to the 6-byte UDH.
const (
	gsmSingle  = 160
	gsmMulti   = 153
	ucs2Single = 70
	ucs2Multi  = 67
)

// Analysis describes how a text would be sent.
type Analysis struct {
	Encoding Encoding
	// Units is septets for GSM-7 (extension characters count 2) and UTF-16
	// code units for UCS-2 (characters outside the BMP count 2).
	Units int
	// Segments is the number of parts Split produces; 0 for empty text.
	Segments int
	// Chars counts runes, each invalid UTF-8 byte as one.
	Chars int
	// NonGSM lists, in order of first appearance, the distinct characters
	// that forced UCS-2 (an invalid UTF-8 byte shows as "\uFFFD"). It is nil
	// for GSM-7, so that Analyze does not allocate in the common case.
	NonGSM []string
}

// Analyze reports the encoding, size and segment count of text without
// allocating when the text is GSM-7.
func Analyze(text string) Analysis {
	enc, units, chars := scan(text)
	a := Analysis{Encoding: enc, Units: units, Chars: chars}
	a.Segments = countSegments(text, enc, units)
	if enc == UCS2 {
		a.NonGSM = nonGSM(text)
	}
	return a
}

// Split cuts text into the parts an SMSC would send. A text within one
// segment's capacity (160 septets / 70 units) is returned whole; otherwise
// each part holds at most 153 septets / 67 units, filled greedily, and no
// part boundary falls inside an escape sequence or a surrogate pair.
// Grapheme clusters (flags, ZWJ emoji, combining marks) may still be split,
// as SMSCs do. The parts always concatenate back to text; empty text gives
// nil.
func Split(text string) []string {
	enc, units, _ := scan(text)
	n := countSegments(text, enc, units)
	switch n {
	case 0:
		return nil
	case 1:
		return []string{text}
	}
	_, limit := capacities(enc)
	parts := make([]string, 0, n)
	for start := 0; start < len(text); {
		end := partEnd(text, start, enc, limit)
		parts = append(parts, text[start:end])
		start = end
	}
	return parts
}

// scan decides the encoding and counts units and runes in one pass.
func scan(text string) (enc Encoding, units, chars int) {
	septets, utf16Units := 0, 0
	gsm := true
	for _, r := range text {
		chars++
		utf16Units += ucs2Units(r)
		if gsm {
			if n := gsmSeptets(r); n > 0 {
				septets += n
			} else {
				gsm = false
			}
		}
	}
	if gsm {
		return GSM7, septets, chars
	}
	return UCS2, utf16Units, chars
}

// countSegments runs the same cuts as Split without building the parts, so
// the count includes the extra segment a displaced escape sequence or
// surrogate pair can cause.
func countSegments(text string, enc Encoding, units int) int {
	single, multi := capacities(enc)
	switch {
	case units == 0:
		return 0
	case units <= single:
		return 1
	}
	n := 0
	for start := 0; start < len(text); n++ {
		start = partEnd(text, start, enc, multi)
	}
	return n
}

// partEnd returns the byte offset where the part starting at start ends: the
// longest run of whole characters whose units fit in limit.
func partEnd(text string, start int, enc Encoding, limit int) int {
	used, i := 0, start
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		var cost int
		if enc == GSM7 {
			cost = gsmSeptets(r)
		} else {
			cost = ucs2Units(r)
		}
		if used+cost > limit {
			break
		}
		used += cost
		i += size
	}
	return i
}

func capacities(enc Encoding) (single, multi int) {
	if enc == GSM7 {
		return gsmSingle, gsmMulti
	}
	return ucs2Single, ucs2Multi
}

// ucs2Units is the UTF-16 length of r. Invalid UTF-8 arrives here as U+FFFD,
// which is one unit.
func ucs2Units(r rune) int {
	if r > 0xFFFF {
		return 2
	}
	return 1
}

// nonGSM lists the distinct characters of text outside the GSM alphabet.
func nonGSM(text string) []string {
	var out []string
	seen := make(map[rune]bool)
	for _, r := range text {
		if gsmSeptets(r) > 0 || seen[r] {
			continue
		}
		seen[r] = true
		out = append(out, string(r))
	}
	return out
}

// MaxUserData is the octets of user data one SMS carries on the air
// interface (3GPP TS 23.040 §9.2.3.16): its UDH and its text together.
const MaxUserData = 140

// PartOctets is the octets of user data that text takes as one part after
// a user data header of udhLen octets (its length octet included), in the
// encoding Analyze picks for it: GSM-7 septets packed after the fill bits
// that align them past the header, or UTF-16 units of two octets. A part
// fits one SMS when this is at most MaxUserData: a carrier bills by what
// goes on the air, whatever the coding it was handed.
func PartOctets(text string, udhLen int) int {
	enc, units, _ := scan(text)
	if enc == UCS2 {
		return udhLen + 2*units
	}
	headerSeptets := (udhLen*8 + 6) / 7
	return ((headerSeptets+units)*7 + 7) / 8
}
