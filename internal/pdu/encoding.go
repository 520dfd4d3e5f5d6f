package pdu

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/msgsvc/msgsvc/internal/channel/sms"
)

// GSMPacking says how GSM 03.38 septets are laid into short_message when
// data_coding is 0. The SMPP client's package documentation
// (internal/provider/smpp) says why Unpacked is the default.
type GSMPacking string

const (
	// Unpacked puts one septet in each octet (high bit clear), which is how
	// SMPP carries the default alphabet in practice.
	Unpacked GSMPacking = "unpacked"
	// Packed puts eight septets in seven octets as on the air interface
	// (3GPP TS 23.038 §6.1.2.1), for SMSCs configured that way.
	Packed GSMPacking = "packed"
)

// carriage return pads a packed message whose last octet has seven spare
// bits, so that a receiver counting septets from octets does not read an
// extra '@' (TS 23.038 §6.1.2.3.1).
const gsmCR = 0x0D

// EncodedPart is one short_message ready for submit_sm.
type EncodedPart struct {
	DataCoding byte
	ESMClass   byte
	Message    []byte
}

// EncodeText encodes text as sms.Split cuts it: GSM 03.38 (data_coding 0)
// when every character is in the default alphabet, UCS-2 (8) otherwise.
// Several parts carry a concatenation UDH with the 8-bit reference ref.
//
// The 8-bit reference IE (0x00) is used because sms.Split sizes parts for a
// six-octet UDH (153 septets, 67 UCS-2 units); the 16-bit IE takes one octet
// more, which would push a full UCS-2 or packed GSM part past the 140 octets
// of the air interface. The 16-bit form is still understood on the way in.
func EncodeText(text string, ref uint8, packing GSMPacking) ([]EncodedPart, error) {
	parts := sms.Split(text)
	if len(parts) == 0 {
		parts = []string{""}
	}
	if len(parts) > 255 {
		return nil, fmt.Errorf("text needs %d parts, a UDH counts at most 255", len(parts))
	}
	_, gsm := sms.EncodeGSM7(text)
	out := make([]EncodedPart, len(parts))
	for i, p := range parts {
		var udh []byte
		if len(parts) > 1 {
			udh = ConcatUDH8(ref, uint8(len(parts)), uint8(i+1))
			out[i].ESMClass = ESMClassUDHI
		}
		if gsm {
			septets, _ := sms.EncodeGSM7(p)
			out[i].DataCoding = CodingDefault
			if packing == Packed {
				septets = PackSeptets(septets, FillBits(len(udh)))
			}
			out[i].Message = append(udh, septets...)
		} else {
			out[i].DataCoding = CodingUCS2
			out[i].Message = append(udh, sms.EncodeUCS2(p)...)
		}
		if len(out[i].Message) > MaxShortMessage {
			return nil, fmt.Errorf("part %d is %d octets (max %d)", i+1, len(out[i].Message), MaxShortMessage)
		}
	}
	return out, nil
}

// EncodeWithUDH encodes text as one part carrying udh, a header its
// sender made (one part of a message it split itself): GSM 03.38 when the
// text fits the alphabet, else UCS-2. Such a part was charged one segment,
// so one that would not fit one SMS on the air is refused here rather than
// handed to an SMSC that would send (and bill) it as several.
func EncodeWithUDH(text string, udh []byte, packing GSMPacking) (EncodedPart, error) {
	if n := sms.PartOctets(text, len(udh)); n > sms.MaxUserData {
		return EncodedPart{}, fmt.Errorf("part with its user data header is %d octets on the air, more than the %d of one segment",
			n, sms.MaxUserData)
	}
	p := EncodedPart{ESMClass: ESMClassUDHI}
	if septets, gsm := sms.EncodeGSM7(text); gsm {
		p.DataCoding = CodingDefault
		if packing == Packed {
			septets = PackSeptets(septets, FillBits(len(udh)))
		}
		p.Message = append(append([]byte(nil), udh...), septets...)
	} else {
		p.DataCoding = CodingUCS2
		p.Message = append(append([]byte(nil), udh...), sms.EncodeUCS2(text)...)
	}
	if len(p.Message) > MaxShortMessage {
		return p, fmt.Errorf("part is %d octets (max %d)", len(p.Message), MaxShortMessage)
	}
	return p, nil
}

// ConcatUDH8 is a UDH holding one concatenation IE with an 8-bit reference.
func ConcatUDH8(ref, total, seq uint8) []byte {
	return []byte{5, 0x00, 3, ref, total, seq}
}

// ConcatUDH16 is a UDH holding one concatenation IE with a 16-bit reference.
func ConcatUDH16(ref uint16, total, seq uint8) []byte {
	return []byte{6, 0x08, 4, byte(ref >> 8), byte(ref), total, seq}
}

// FillBits is the padding that aligns the first septet after a UDH of n
// octets (UDHL included) to a septet boundary.
func FillBits(n int) int { return (7 - (n*8)%7) % 7 }

// PackSeptets packs septets least significant bit first, after fill zero
// bits. Seven spare bits at the end become a CR (see gsmCR).
func PackSeptets(septets []byte, fill int) []byte {
	bits := fill + 7*len(septets)
	out := make([]byte, (bits+7)/8)
	pos := fill
	put := func(s byte) {
		v := uint16(s&0x7F) << (pos % 8)
		out[pos/8] |= byte(v)
		if pos/8+1 < len(out) {
			out[pos/8+1] |= byte(v >> 8)
		}
		pos += 7
	}
	for _, s := range septets {
		put(s)
	}
	if len(out)*8-bits == 7 {
		put(gsmCR)
	}
	return out
}

// UnpackSeptets is the inverse of PackSeptets. A final CR that sits in what
// would be seven padding bits is taken as padding; a text that really ends
// in CR exactly there loses it, the ambiguity TS 23.038 leaves to octet
// lengths.
func UnpackSeptets(b []byte, fill int) []byte {
	total := len(b)*8 - fill
	if total < 7 {
		return nil
	}
	n := total / 7
	out := make([]byte, n)
	for i := range out {
		pos := fill + 7*i
		v := uint16(b[pos/8])
		if pos/8+1 < len(b) {
			v |= uint16(b[pos/8+1]) << 8
		}
		out[i] = byte(v>>(pos%8)) & 0x7F
	}
	if total%7 == 0 && out[n-1] == gsmCR {
		out = out[:n-1]
	}
	return out
}

// ConcatInfo identifies one part of a concatenated message.
type ConcatInfo struct {
	Ref   uint16
	Total uint8
	Seq   uint8
}

// SplitUDH parses a user data header at the start of msg and returns the
// concatenation IE (if any), the UDH length with its length octet, and the
// rest. IEs other than concatenation are skipped.
func SplitUDH(msg []byte) (ci *ConcatInfo, udhLen int, rest []byte, err error) {
	if len(msg) == 0 {
		return nil, 0, nil, fmt.Errorf("UDHI set on an empty message")
	}
	udhLen = int(msg[0]) + 1
	if udhLen > len(msg) {
		return nil, 0, nil, fmt.Errorf("UDH length %d, message %d octets", udhLen-1, len(msg))
	}
	for ies := msg[1:udhLen]; len(ies) > 0; {
		if len(ies) < 2 || int(ies[1])+2 > len(ies) {
			return nil, 0, nil, fmt.Errorf("truncated UDH information element")
		}
		id, data := ies[0], ies[2:2+int(ies[1])]
		switch {
		case id == 0x00 && len(data) == 3:
			ci = &ConcatInfo{Ref: uint16(data[0]), Total: data[1], Seq: data[2]}
		case id == 0x08 && len(data) == 4:
			ci = &ConcatInfo{Ref: uint16(data[0])<<8 | uint16(data[1]), Total: data[2], Seq: data[3]}
		}
		ies = ies[2+len(data):]
	}
	return ci, udhLen, msg[udhLen:], nil
}

// alphabet is how the octets of a data_coding are read.
type alphabet int

const (
	alphaLatin1 alphabet = iota // also the fallback for codings not known here
	alphaGSM
	alphaASCII
	alphaUCS2
)

// alphabetOf reads SMPP data_coding (§5.2.19), including the GSM 03.38 coding
// groups that some SMSCs pass through (message class, general data coding).
// Codings this package does not know are read as Latin-1, which at least
// keeps ASCII readable.
func alphabetOf(dc byte) alphabet {
	switch {
	case dc == CodingDefault:
		return alphaGSM
	case dc == CodingASCII:
		return alphaASCII
	case dc == CodingUCS2:
		return alphaUCS2
	case dc&0xF0 == 0xF0: // message class group: bit 2 picks 8-bit data
		if dc&0x04 == 0 {
			return alphaGSM
		}
	case dc >= 0x10 && dc&0xC0 == 0x00: // general data coding group
		switch dc & 0x0C {
		case 0x00:
			return alphaGSM
		case 0x08:
			return alphaUCS2
		}
	}
	return alphaLatin1
}

// IsGSM reports whether data_coding dc is read as GSM 03.38 septets, the
// only alphabet whose octets may be packed.
func IsGSM(dc byte) bool { return alphabetOf(dc) == alphaGSM }

// DecodeUserData decodes user data by data_coding. fill is the number of
// padding bits before the first septet when GSM text is packed after a UDH.
func DecodeUserData(dc byte, data []byte, fill int, packing GSMPacking) string {
	switch alphabetOf(dc) {
	case alphaGSM:
		return decodeGSM(data, fill, packing)
	case alphaASCII:
		return decodeASCII(data)
	case alphaUCS2:
		return sms.DecodeUCS2(data)
	}
	return DecodeLatin1(data)
}

func decodeGSM(data []byte, fill int, packing GSMPacking) string {
	if packing == Packed {
		data = UnpackSeptets(data, fill)
	}
	return sms.DecodeGSM7(data)
}

func decodeASCII(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for _, c := range b {
		if c >= utf8.RuneSelf {
			sb.WriteRune(utf8.RuneError)
			continue
		}
		sb.WriteByte(c)
	}
	return sb.String()
}

func DecodeLatin1(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for _, c := range b {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

// DecodeText decodes a short_message or message_payload by data_coding,
// GSM 03.38 read one septet per octet. A server uses it for what its
// ESMEs submit.
func DecodeText(dc byte, data []byte) string { return DecodeUserData(dc, data, 0, Unpacked) }

// UDHLen is the length of the user data header at the start of msg,
// its length octet included. A header that a sender made is held to the
// rules of its concatenation IE: a total of at least one part and a
// sequence number from 1 to the total (TS 23.040 §9.2.3.24.1), since a
// handset cannot put together a part numbered otherwise.
func UDHLen(msg []byte) (int, error) {
	ci, n, _, err := SplitUDH(msg)
	if err != nil {
		return 0, err
	}
	if ci != nil && (ci.Total == 0 || ci.Seq == 0 || ci.Seq > ci.Total) {
		return 0, fmt.Errorf("concatenation IE numbers part %d of %d", ci.Seq, ci.Total)
	}
	return n, nil
}
