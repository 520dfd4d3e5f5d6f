package pdu

import (
	"encoding/binary"
	"fmt"
)

// Tag is an optional parameter tag (SMPP 3.4 §5.3.2).
type Tag uint16

// The optional parameters this package reads or writes.
const (
	TagSARMsgRefNum         Tag = 0x020C // 2 octets: concatenation reference
	TagSARTotalSegments     Tag = 0x020E // 1 octet
	TagSARSegmentSeqnum     Tag = 0x020F // 1 octet, from 1
	TagSCInterfaceVersion   Tag = 0x0210 // 1 octet, in bind responses
	TagReceiptedMessageID   Tag = 0x001E // C-octet string, up to 65 octets
	TagMessageState         Tag = 0x0427 // 1 octet, see MessageState
	TagMessagePayload       Tag = 0x0424 // instead of short_message
	TagNetworkErrorCode     Tag = 0x0423 // 3 octets
	TagUserMessageReference Tag = 0x0204 // 2 octets
)

// fixedTLVLen lists the tags whose value has one permitted length. A value
// of another length is a malformed PDU rather than something to guess at.
func fixedTLVLen(t Tag) (int, bool) {
	switch t {
	case TagSARMsgRefNum, TagUserMessageReference:
		return 2, true
	case TagSARTotalSegments, TagSARSegmentSeqnum, TagSCInterfaceVersion, TagMessageState:
		return 1, true
	case TagNetworkErrorCode:
		return 3, true
	}
	return 0, false
}

// TLV is one optional parameter. Value is the raw value; a C-octet string
// value keeps its NUL terminator.
type TLV struct {
	Tag   Tag
	Value []byte
}

// TLVs are the optional parameters of a PDU, in the order they came.
type TLVs []TLV

// Get returns the value of the first TLV with tag t.
func (ts TLVs) Get(t Tag) ([]byte, bool) {
	for _, tv := range ts {
		if tv.Tag == t {
			return tv.Value, true
		}
	}
	return nil, false
}

// Byte returns a one-octet TLV value.
func (ts TLVs) Byte(t Tag) (byte, bool) {
	v, ok := ts.Get(t)
	if !ok || len(v) != 1 {
		return 0, false
	}
	return v[0], true
}

// Uint16 returns a two-octet TLV value.
func (ts TLVs) Uint16(t Tag) (uint16, bool) {
	v, ok := ts.Get(t)
	if !ok || len(v) != 2 {
		return 0, false
	}
	return binary.BigEndian.Uint16(v), true
}

// CString returns a C-octet string TLV value without its terminator. Some
// SMSCs leave the NUL out; the text before the first NUL is taken either way.
func (ts TLVs) CString(t Tag) (string, bool) {
	v, ok := ts.Get(t)
	if !ok {
		return "", false
	}
	for i, c := range v {
		if c == 0 {
			return string(v[:i]), true
		}
	}
	return string(v), true
}

// StringTLV builds a C-octet string TLV (terminator added).
func StringTLV(t Tag, s string) TLV {
	v := make([]byte, len(s)+1)
	copy(v, s)
	return TLV{Tag: t, Value: v}
}

// ByteTLV builds a one-octet TLV.
func ByteTLV(t Tag, b byte) TLV { return TLV{Tag: t, Value: []byte{b}} }

// Uint16TLV builds a two-octet TLV.
func Uint16TLV(t Tag, v uint16) TLV {
	return TLV{Tag: t, Value: binary.BigEndian.AppendUint16(nil, v)}
}

// appendTLVs writes the TLVs; a value longer than a TLV length can say is
// refused rather than truncated.
func appendTLVs(b []byte, ts TLVs) ([]byte, error) {
	for _, tv := range ts {
		if len(tv.Value) > 0xFFFF {
			return b, fmt.Errorf("%w: TLV 0x%04x value of %d octets", ErrMalformed, uint16(tv.Tag), len(tv.Value))
		}
		if n, fixed := fixedTLVLen(tv.Tag); fixed && len(tv.Value) != n {
			return b, fmt.Errorf("%w: TLV 0x%04x must be %d octets, not %d", ErrMalformed, uint16(tv.Tag), n, len(tv.Value))
		}
		b = binary.BigEndian.AppendUint16(b, uint16(tv.Tag))
		b = binary.BigEndian.AppendUint16(b, uint16(len(tv.Value)))
		b = append(b, tv.Value...)
	}
	return b, nil
}

// readTLVs reads TLVs until the end of the body. Each value is copied out
// of the read buffer, so a decoded PDU does not pin the connection's buffer.
func readTLVs(r *reader) (TLVs, error) {
	var ts TLVs
	for r.len() > 0 {
		if r.len() < 4 {
			return nil, r.errf("TLV header", "%d stray octets", r.len())
		}
		tag := Tag(r.u16())
		n := int(r.u16())
		if n > r.len() {
			return nil, r.errf("TLV", "0x%04x says %d octets, %d left", uint16(tag), n, r.len())
		}
		if want, fixed := fixedTLVLen(tag); fixed && n != want {
			return nil, r.errf("TLV", "0x%04x must be %d octets, not %d", uint16(tag), want, n)
		}
		if tag == TagReceiptedMessageID && n > MaxMessageID {
			return nil, r.errf("TLV", "receipted_message_id of %d octets (max %d)", n, MaxMessageID)
		}
		ts = append(ts, TLV{Tag: tag, Value: append([]byte(nil), r.bytes(n)...)})
	}
	return ts, nil
}
