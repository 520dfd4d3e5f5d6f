package sms

import (
	"slices"
	"strings"
	"testing"
)

// english returns the first n characters of a realistic GSM-only OTP text
// (no extension characters), repeated as needed.
func english(n int) string {
	const s = "Your verification code is 482913. It expires in 10 minutes. Do not share it with anyone, not even our staff. "
	return strings.Repeat(s, n/len(s)+1)[:n]
}

// unitsIn measures s with the encoders, independently of the counting code.
func unitsIn(s string, enc Encoding) int {
	if enc == GSM7 {
		b, ok := EncodeGSM7(s)
		if !ok {
			return -1
		}
		return len(b)
	}
	return len(EncodeUCS2(s)) / 2
}

func TestAnalyzeAndSplit(t *testing.T) {
	cyrillic := strings.Repeat("ж", 100)
	tests := []struct {
		name   string
		text   string
		enc    Encoding
		units  int
		chars  int   // -1: same as units
		parts  []int // units in each part
		nonGSM []string
	}{
		{"empty", "", GSM7, 0, 0, nil, nil},
		{"short english", "Hi Ana, your table for 2 is ready.", GSM7, 34, -1, []int{34}, nil},
		{"english 160", english(160), GSM7, 160, -1, []int{160}, nil},
		{"english 161", english(161), GSM7, 161, -1, []int{153, 8}, nil},
		{"english 306", english(306), GSM7, 306, -1, []int{153, 153}, nil},
		{"english 307", english(307), GSM7, 307, -1, []int{153, 153, 1}, nil},
		{"euro ends 160", english(158) + "€", GSM7, 160, 159, []int{160}, nil},
		{"euro makes 161", english(159) + "€", GSM7, 161, 160, []int{153, 8}, nil},
		{"euro ends part at 153", english(151) + "€" + english(10), GSM7, 163, 162, []int{153, 10}, nil},
		// The escape would be septet 153 and its code septet 154: the whole
		// euro moves on, so 306 septets need three parts, not two.
		{"euro straddles 153", english(152) + "€" + english(152), GSM7, 306, 305, []int{152, 153, 1}, nil},
		{"bracket straddles 153", english(152) + "[ok]" + english(100), GSM7, 258, 256, []int{152, 106}, nil},
		{"all extension chars", "Price: 10€ {promo} [today] ~50% | a\\b ^\f", GSM7, 50, 40, []int{50}, nil},
		{"160 extension septets", strings.Repeat("|", 80), GSM7, 160, 80, []int{160}, nil},
		{"161 septets of brackets", strings.Repeat("[", 80) + "x", GSM7, 161, 81, []int{152, 9}, nil},
		{"german GSM", "Grüße aus München, Straße 5", GSM7, 27, -1, []int{27}, nil},
		{"spanish GSM", "¡Feliz año! ¿Qué tal?", GSM7, 21, -1, []int{21}, nil},
		{"french GSM", "Très élégant, à demain", GSM7, 22, -1, []int{22}, nil},
		{"italian GSM", "Però è così, più o meno", GSM7, 23, -1, []int{23}, nil},
		{"greek capitals GSM", "ΔΦΓΛΩΠΨΣΘΞ", GSM7, 10, -1, []int{10}, nil},
		{"portuguese", "Olá! Seu código é 1234. Não compartilhe.", UCS2, 40, -1, []int{40}, []string{"á", "ó", "ã"}},
		{"spanish", "¿Dónde está? Mañana.", UCS2, 20, -1, []int{20}, []string{"ó", "á"}},
		{"french", "Ça coûte 5€, où êtes-vous ?", UCS2, 27, -1, []int{27}, []string{"û", "ê"}},
		{"lower-case c cedilla", "Promoção", UCS2, 8, -1, []int{8}, []string{"ç", "ã"}},
		{"curly quotes", "It’s “great”", UCS2, 12, -1, []int{12}, []string{"’", "“", "”"}},
		{"backtick and tab", "a`b\tc", UCS2, 5, -1, []int{5}, []string{"`", "\t"}},
		{"emoji", "Thanks! 😀👍", UCS2, 12, 10, []int{12}, []string{"😀", "👍"}},
		{"emoji ends 70", strings.Repeat("a", 68) + "😀", UCS2, 70, 69, []int{70}, []string{"😀"}},
		{"emoji ends part at 67", strings.Repeat("a", 65) + "😀" + strings.Repeat("b", 10), UCS2, 77, 76, []int{67, 10}, []string{"😀"}},
		{"emoji straddles 67", strings.Repeat("a", 66) + "😀" + strings.Repeat("b", 10), UCS2, 78, 77, []int{66, 12}, []string{"😀"}},
		{"cyrillic", "Ваш код подтверждения: 4821", UCS2, 27, -1, []int{27}, []string{"В", "а", "ш", "к", "о", "д", "п", "т", "в", "е", "р", "ж", "н", "и", "я"}},
		{"cyrillic 70", cyrillic[:140], UCS2, 70, -1, []int{70}, []string{"ж"}},
		{"cyrillic 71", cyrillic[:142], UCS2, 71, -1, []int{67, 4}, []string{"ж"}},
		{"arabic", "رمز 4821", UCS2, 8, -1, []int{8}, []string{"ر", "م", "ز"}},
		{"chinese", "您的验证码是4821。", UCS2, 11, -1, []int{11}, []string{"您", "的", "验", "证", "码", "是", "。"}},
		{"japanese", "コード4821", UCS2, 7, -1, []int{7}, []string{"コ", "ー", "ド"}},
		{"CJK extension B", "𠀋𠀋", UCS2, 4, 2, []int{4}, []string{"𠀋"}},
		{"one non-GSM char in 160", english(159) + "’", UCS2, 160, -1, []int{67, 67, 26}, []string{"’"}},
		{"invalid UTF-8", "abc\xffdef", UCS2, 7, -1, []int{7}, []string{"\uFFFD"}},
		{"invalid UTF-8 bytes", "\xff\xfe\xff", UCS2, 3, -1, []int{3}, []string{"\uFFFD"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.chars < 0 {
				tt.chars = tt.units
			}
			a := Analyze(tt.text)
			want := Analysis{Encoding: tt.enc, Units: tt.units, Segments: len(tt.parts), Chars: tt.chars, NonGSM: tt.nonGSM}
			if a.Encoding != want.Encoding || a.Units != want.Units || a.Segments != want.Segments ||
				a.Chars != want.Chars || !slices.Equal(a.NonGSM, want.NonGSM) {
				t.Errorf("Analyze = %+v\n want    %+v", a, want)
			}
			parts := Split(tt.text)
			if strings.Join(parts, "") != tt.text {
				t.Errorf("parts do not rejoin: %q", parts)
			}
			got := make([]int, len(parts))
			for i, p := range parts {
				got[i] = unitsIn(p, tt.enc)
			}
			if !slices.Equal(got, tt.parts) {
				t.Errorf("part sizes = %v; want %v", got, tt.parts)
			}
		})
	}
}

func TestMaxSegments(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		segments int
	}{
		{"GSM 1530 septets", english(1530), 10},
		{"GSM 1531 septets", english(1531), 11},
		// 76 euros fill a 153-septet part (152 septets), so 765 euros =
		// 1530 septets need 11 parts.
		{"GSM 760 euros", strings.Repeat("€", 760), 10},
		{"GSM 765 euros", strings.Repeat("€", 765), 11},
		{"UCS-2 670 units", strings.Repeat("ж", 670), 10},
		{"UCS-2 671 units", strings.Repeat("ж", 671), 11},
		// 33 emoji fill a 67-unit part (66 units), so 335 emoji = 670 units
		// still need 11 parts.
		{"330 emoji", strings.Repeat("😀", 330), 10},
		{"335 emoji", strings.Repeat("😀", 335), 11},
	}
	for _, tt := range tests {
		a := Analyze(tt.text)
		if a.Segments != tt.segments || len(Split(tt.text)) != tt.segments {
			t.Errorf("%s: Segments = %d, len(Split) = %d; want %d", tt.name, a.Segments, len(Split(tt.text)), tt.segments)
		}
		if fits := a.Segments <= MaxSegments; fits != (tt.segments <= 10) {
			t.Errorf("%s: fits = %v", tt.name, fits)
		}
	}
}

func TestAnalyzeGSMDoesNotAllocate(t *testing.T) {
	for _, text := range []string{english(300), english(100) + "€[]{}|" + english(100), "¡Feliz año! ¿Qué tal?"} {
		if n := testing.AllocsPerRun(100, func() { _ = Analyze(text) }); n != 0 {
			t.Errorf("Analyze(%.20q...) allocates %v times", text, n)
		}
	}
}

func BenchmarkAnalyze(b *testing.B) {
	cases := []struct{ name, text string }{
		{"GSM", english(300)},
		{"GSM-extension", strings.Repeat(english(20)+"€", 14)[:300]},
		{"UCS-2", strings.Repeat("Ваш код подтверждения: 4821. ", 11)[:300]},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				_ = Analyze(c.text)
			}
		})
	}
}

// PartOctets measures a part as it goes on the air: 153 GSM-7 septets or
// 67 UCS-2 units fill the 140 octets after a six-octet concatenation UDH,
// one more does not fit.
func TestPartOctets(t *testing.T) {
	gsm, ucs := strings.Repeat("a", 153), strings.Repeat("я", 67)
	cases := []struct {
		text   string
		udhLen int
		want   int
	}{
		{gsm, 6, 140},
		{gsm + "a", 6, 141},
		{gsm + "€", 6, 142}, // an extension character takes two septets
		{strings.Repeat("a", 152), 7, 140},
		{strings.Repeat("a", 153), 7, 141},
		{ucs, 6, 140},
		{ucs + "я", 6, 142},
		{strings.Repeat("a", 160), 0, 140},
		{"", 6, 7}, // the header alone, as septets with its fill bits
		{strings.Repeat("a", 1524), 6, 1340},
	}
	for _, c := range cases {
		if got := PartOctets(c.text, c.udhLen); got != c.want {
			t.Errorf("PartOctets(%d runes of %q…, %d) = %d, want %d", len([]rune(c.text)), c.text[:min(len(c.text), 2)], c.udhLen, got, c.want)
		}
	}
}
