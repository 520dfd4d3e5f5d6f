package pdu

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/channel/sms"
)

func TestEncodeTextSinglePart(t *testing.T) {
	parts, err := EncodeText("Hi @ you {x}", 9, Unpacked)
	if err != nil || len(parts) != 1 {
		t.Fatalf("EncodeText = %v, %v", parts, err)
	}
	p := parts[0]
	want := []byte{'H', 'i', ' ', 0x00, ' ', 'y', 'o', 'u', ' ', 0x1B, 0x28, 'x', 0x1B, 0x29}
	if p.DataCoding != CodingDefault || p.ESMClass != 0 || !bytes.Equal(p.Message, want) {
		t.Fatalf("part = %+v; want message % x", p, want)
	}

	parts, err = EncodeText("Olá ж", 9, Unpacked)
	if err != nil || len(parts) != 1 || parts[0].DataCoding != CodingUCS2 ||
		!bytes.Equal(parts[0].Message, []byte{0, 'O', 0, 'l', 0, 0xE1, 0, ' ', 0x04, 0x36}) {
		t.Fatalf("UCS-2 part = %+v, %v", parts, err)
	}
}

func TestEncodeTextConcatenated(t *testing.T) {
	for _, tc := range []struct {
		name    string
		text    string
		packing GSMPacking
		coding  byte
	}{
		{"GSM unpacked", strings.Repeat("abcdefghij", 40), Unpacked, CodingDefault},
		{"GSM packed", strings.Repeat("abcdefghi€", 40), Packed, CodingDefault},
		{"UCS-2", strings.Repeat("жизнь ", 30), Unpacked, CodingUCS2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := sms.Split(tc.text)
			parts, err := EncodeText(tc.text, 200, tc.packing)
			if err != nil || len(parts) != len(want) || len(parts) < 3 {
				t.Fatalf("EncodeText = %d parts, %v; Split gives %d", len(parts), err, len(want))
			}
			var got strings.Builder
			for i, p := range parts {
				if p.ESMClass != ESMClassUDHI || p.DataCoding != tc.coding {
					t.Fatalf("part %d: esm_class %#x data_coding %d", i, p.ESMClass, p.DataCoding)
				}
				ci, n, rest, err := SplitUDH(p.Message)
				if err != nil || n != 6 || ci == nil || *ci != (ConcatInfo{Ref: 200, Total: uint8(len(parts)), Seq: uint8(i + 1)}) {
					t.Fatalf("part %d UDH = %+v, %d, %v", i, ci, n, err)
				}
				if tc.packing == Packed && len(p.Message) > 140 {
					t.Fatalf("packed part %d is %d octets, over the air interface's 140", i, len(p.Message))
				}
				text := DecodeUserData(p.DataCoding, rest, FillBits(n), tc.packing)
				if text != want[i] {
					t.Fatalf("part %d decodes to %q; want %q", i, text, want[i])
				}
				got.WriteString(text)
			}
			if got.String() != tc.text {
				t.Fatal("parts do not rejoin")
			}
		})
	}
}

func TestPackSeptetsKnownVector(t *testing.T) {
	// "hellohello" is the classic example of TS 23.038 packing.
	septets, _ := sms.EncodeGSM7("hellohello")
	want := []byte{0xE8, 0x32, 0x9B, 0xFD, 0x46, 0x97, 0xD9, 0xEC, 0x37}
	if got := PackSeptets(septets, 0); !bytes.Equal(got, want) {
		t.Fatalf("packed = % X; want % X", got, want)
	}
	if got := UnpackSeptets(want, 0); !bytes.Equal(got, septets) {
		t.Fatalf("unpacked = % x", got)
	}
	// Seven septets leave seven spare bits: they carry a CR, which the
	// unpacker drops again.
	seven, _ := sms.EncodeGSM7("1234567")
	packed := PackSeptets(seven, 0)
	if len(packed) != 7 || packed[6]>>1 != gsmCR {
		t.Fatalf("seven septets packed to % X", packed)
	}
	if got := UnpackSeptets(packed, 0); !bytes.Equal(got, seven) {
		t.Fatalf("seven septets unpacked to % x", got)
	}
}

func TestPackRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		septets := make([]byte, rng.IntN(170))
		for i := range septets {
			septets[i] = byte(rng.IntN(128))
		}
		if n := len(septets); n > 0 && septets[n-1] == gsmCR {
			septets[n-1] = 'x' // the one ambiguity of packing, see UnpackSeptets
		}
		fill := rng.IntN(7)
		got := UnpackSeptets(PackSeptets(septets, fill), fill)
		if !bytes.Equal(got, septets) && !(len(septets) == 0 && len(got) == 0) {
			t.Fatalf("fill %d: % x -> % x", fill, septets, got)
		}
	}
}

func TestSplitUDH(t *testing.T) {
	msg := append(ConcatUDH16(0xBEEF, 4, 2), "xy"...)
	ci, n, rest, err := SplitUDH(msg)
	if err != nil || n != 7 || *ci != (ConcatInfo{Ref: 0xBEEF, Total: 4, Seq: 2}) || string(rest) != "xy" {
		t.Fatalf("16-bit: %+v %d %q %v", ci, n, rest, err)
	}
	// Another IE (port addressing) before the concatenation IE is skipped.
	msg = []byte{11, 0x05, 4, 0, 0, 0, 0, 0x00, 3, 1, 2, 1, 'z'}
	ci, n, rest, err = SplitUDH(msg)
	if err != nil || n != 12 || *ci != (ConcatInfo{Ref: 1, Total: 2, Seq: 1}) || string(rest) != "z" {
		t.Fatalf("two IEs: %+v %d %q %v", ci, n, rest, err)
	}
	ci, _, _, err = SplitUDH([]byte{2, 0x05, 0, 'a'})
	if err != nil || ci != nil {
		t.Fatalf("no concatenation IE: %+v %v", ci, err)
	}
	for _, bad := range [][]byte{{}, {5, 0, 3}, {3, 0x00, 3, 1}, {1, 0x00}} {
		if _, _, _, err := SplitUDH(bad); err == nil {
			t.Errorf("SplitUDH(% x) accepted", bad)
		}
	}
}

func TestDecodeText(t *testing.T) {
	cases := []struct {
		dc   byte
		in   []byte
		want string
	}{
		{CodingDefault, []byte{'O', 'K', 0x00, 0x1B, 0x65}, "OK@€"},
		{CodingASCII, []byte("plain\x80"), "plain\uFFFD"},
		{CodingLatin1, []byte{'c', 0xE9}, "cé"},
		{CodingUCS2, []byte{0x04, 0x36, 0xD8, 0x3D, 0xDE, 0x00}, "ж😀"},
		{0xF1, []byte{'O', 'K', 0x00}, "OK@"},   // message class 1, GSM alphabet
		{0xF5, []byte{'O', 'K', 0xE9}, "OKé"},   // message class 1, 8-bit
		{0x18, []byte{0x00, 0x41}, "A"},         // general group, UCS-2
		{0x11, []byte{'a', 0x00}, "a@"},         // general group with class, GSM
		{CodingBinary, []byte{'a', 0xFF}, "aÿ"}, // unknown use: Latin-1
	}
	for _, c := range cases {
		if got := DecodeUserData(c.dc, c.in, 0, Unpacked); got != c.want {
			t.Errorf("DecodeUserData(%#x, % x) = %q; want %q", c.dc, c.in, got, c.want)
		}
	}
	packed := PackSeptets([]byte("Hi"), 0)
	if got := DecodeUserData(CodingDefault, packed, 0, Packed); got != "Hi" {
		t.Errorf("packed decode = %q", got)
	}
}
