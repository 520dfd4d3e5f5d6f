package pdu

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// FuzzDecode feeds arbitrary octets to the decoder. It must never panic;
// whatever it accepts must encode back to the very same octets (every field
// is kept exactly, TLVs in order), and ReadPDU must agree with Decode.
// Crashers found so far are kept in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	for _, p := range samplePDUs() {
		f.Add(mustEncode(f, p))
	}
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0x15, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b)
		r, rerr := ReadPDU(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrLength) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode error %v wraps neither ErrLength nor ErrMalformed", err)
			}
			if errors.Is(err, ErrMalformed) && p.Body != nil {
				t.Fatalf("malformed PDU came with a body: %#v", p)
			}
			// ReadPDU frames by command_length, so it may read a valid
			// prefix of octets whose total length Decode refused; a body
			// that Decode finds malformed it must refuse as well.
			if errors.Is(err, ErrMalformed) && !errors.Is(rerr, ErrMalformed) {
				t.Fatalf("ReadPDU = %v where Decode found %v", rerr, err)
			}
			return
		}
		if rerr != nil || !reflect.DeepEqual(p, r) {
			t.Fatalf("ReadPDU = %#v, %v; Decode = %#v", r, rerr, p)
		}
		enc, err := Encode(p)
		if err != nil {
			t.Fatalf("Encode(Decode(b)) failed: %v\n%#v", err, p)
		}
		if !bytes.Equal(enc, b) {
			t.Fatalf("round trip changed the octets\n in % x\nout % x", b, enc)
		}
		if sm, ok := p.Body.(*SM); ok {
			// Nothing the inbound path does with a deliver_sm's text may
			// panic (the SMPP client fuzzes its receipt parsing itself).
			_, _, _, _ = SplitUDH(sm.ShortMessage)
			_ = DecodeUserData(sm.DataCoding, sm.ShortMessage, 1, Packed)
			_ = DecodeUserData(sm.DataCoding, sm.ShortMessage, 0, Unpacked)
		}
	})
}
