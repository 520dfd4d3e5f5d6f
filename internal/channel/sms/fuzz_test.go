package sms

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzSplit(f *testing.F) {
	for _, seed := range []string{
		"", "a", english(160), english(161), english(152) + "€" + english(152),
		strings.Repeat("€", 77), strings.Repeat("[]", 90), "¡Feliz año! ¿Qué tal?",
		strings.Repeat("a", 66) + "😀" + strings.Repeat("b", 10), strings.Repeat("😀", 40),
		"Olá, você", "It’s “great”", "abc\xffdef", "\xed\xa0\x80", "\x1b\x1b", "\f\r\n",
		strings.Repeat("ж", 71), "👨‍👩‍👧 🇧🇷",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		a := Analyze(text)
		parts := Split(text)

		if strings.Join(parts, "") != text {
			t.Fatalf("parts %q do not rejoin to %q", parts, text)
		}
		if a.Segments != len(parts) {
			t.Fatalf("Segments = %d, len(Split) = %d", a.Segments, len(parts))
		}
		if want := utf8.RuneCountInString(text); a.Chars != want {
			t.Fatalf("Chars = %d; want %d", a.Chars, want)
		}

		gsm, isGSM := EncodeGSM7(text)
		switch {
		case isGSM && (a.Encoding != GSM7 || a.NonGSM != nil):
			t.Fatalf("GSM text analysed as %+v", a)
		case !isGSM && (a.Encoding != UCS2 || len(a.NonGSM) == 0):
			t.Fatalf("non-GSM text analysed as %+v", a)
		}
		if isGSM {
			if len(gsm) != a.Units {
				t.Fatalf("Units = %d; encoded septets = %d", a.Units, len(gsm))
			}
			if got := DecodeGSM7(gsm); got != text {
				t.Fatalf("GSM round trip: %q -> % X -> %q", text, gsm, got)
			}
		} else if n := len(EncodeUCS2(text)) / 2; n != a.Units {
			t.Fatalf("Units = %d; UTF-16 units = %d", a.Units, n)
		}
		if utf8.ValidString(text) {
			if got := DecodeUCS2(EncodeUCS2(text)); got != text {
				t.Fatalf("UCS-2 round trip: %q -> %q", text, got)
			}
		}
		for _, r := range a.NonGSM {
			if _, ok := EncodeGSM7(r); ok || utf8.RuneCountInString(r) != 1 {
				t.Fatalf("NonGSM entry %q is GSM or not one character", r)
			}
		}
		if sorted := slices.Sorted(slices.Values(a.NonGSM)); len(slices.Compact(sorted)) != len(a.NonGSM) {
			t.Fatalf("NonGSM has duplicates: %q", a.NonGSM)
		}

		limit := map[Encoding]int{GSM7: 153, UCS2: 67}[a.Encoding]
		if len(parts) == 1 {
			limit = map[Encoding]int{GSM7: 160, UCS2: 70}[a.Encoding]
		}
		total := 0
		for i, p := range parts {
			n := unitsIn(p, a.Encoding)
			if p == "" || n > limit {
				t.Fatalf("part %d %q has %d units; limit %d", i, p, n, limit)
			}
			total += n
			// Greedy: the next part's first character must not have fitted,
			// otherwise Segments could be larger than necessary.
			if i+1 < len(parts) {
				r, size := utf8.DecodeRuneInString(parts[i+1])
				if n+unitsIn(parts[i+1][:size], a.Encoding) <= limit {
					t.Fatalf("part %d stopped early before %q", i, r)
				}
			}
		}
		if total != a.Units {
			t.Fatalf("parts hold %d units; Units = %d", total, a.Units)
		}

		// Decoders must accept arbitrary bytes and return valid UTF-8.
		if s := DecodeGSM7([]byte(text)); !utf8.ValidString(s) {
			t.Fatalf("DecodeGSM7 returned invalid UTF-8 %q", s)
		}
		if s := DecodeUCS2([]byte(text)); !utf8.ValidString(s) {
			t.Fatalf("DecodeUCS2 returned invalid UTF-8 %q", s)
		}
	})
}
