package pdu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// samplePDUs is one PDU of every kind the codec knows, used as round-trip
// cases and fuzz seeds.
func samplePDUs() []PDU {
	return []PDU{
		{Command: BindTransceiver, Seq: 1, Body: &Bind{SystemID: "kannel", Password: "secret", SystemType: "VMA",
			InterfaceVersion: InterfaceVersion, AddrTON: 1, AddrNPI: 1, AddressRange: "^55"}},
		{Command: BindTransceiverResp, Seq: 1, Body: &BindResp{SystemID: "SMSC",
			TLVs: TLVs{ByteTLV(TagSCInterfaceVersion, 0x34)}}},
		{Command: BindTransceiverResp, Status: StatusBindFail, Seq: 1},
		{Command: SubmitSM, Seq: 2, Body: &SM{SourceTON: 5, SourceAddr: "MyShop", DestTON: 1, DestNPI: 1,
			DestAddr: "5511999990000", ESMClass: ESMClassUDHI, ValidityPeriod: "261121100000000+",
			RegisteredDelivery: 1, ShortMessage: append(ConcatUDH8(7, 2, 1), "Hello"...)}},
		{Command: SubmitSMResp, Seq: 2, Body: &SMResp{MessageID: "abc123"}},
		{Command: SubmitSMResp, Status: StatusThrottled, Seq: 3},
		{Command: DeliverSM, Seq: 9, Body: &SM{SourceTON: 1, SourceNPI: 1, SourceAddr: "5511999990000",
			DestAddr: "MyShop", ESMClass: ESMClassReceipt,
			ShortMessage: []byte("id:abc123 sub:001 dlvrd:001 submit date:2611211000 done date:2611211001 stat:DELIVRD err:000 text:Hello"),
			TLVs:         TLVs{StringTLV(TagReceiptedMessageID, "abc123"), ByteTLV(TagMessageState, 2)}}},
		{Command: DeliverSM, Seq: 10, Body: &SM{SourceAddr: "1", DestAddr: "2",
			TLVs: TLVs{Uint16TLV(TagSARMsgRefNum, 513), ByteTLV(TagSARTotalSegments, 2), ByteTLV(TagSARSegmentSeqnum, 1),
				{Tag: TagMessagePayload, Value: bytes.Repeat([]byte("x"), 300)}}}},
		{Command: DeliverSMResp, Seq: 9, Body: &SMResp{}},
		{Command: QuerySM, Seq: 11, Body: &Query{MessageID: "abc123", SourceTON: 5, SourceAddr: "MyShop"}},
		{Command: QuerySMResp, Seq: 11, Body: &QueryResp{MessageID: "abc123", FinalDate: "261121100100000+", MessageState: StateDelivered}},
		{Command: QuerySMResp, Seq: 12, Body: &QueryResp{MessageID: "abc124", MessageState: StateEnroute}},
		{Command: QuerySMResp, Status: StatusQueryFail, Seq: 13},
		{Command: EnquireLink, Seq: 4},
		{Command: EnquireLinkResp, Seq: 4},
		{Command: Unbind, Seq: 5},
		{Command: UnbindResp, Seq: 5},
		{Command: GenericNack, Status: StatusInvCmdID, Seq: 6},
		{Command: 0x00000103, Seq: 7, Body: &Raw{Data: []byte{1, 2, 3}}}, // data_sm, not interpreted
	}
}

func mustEncode(t testing.TB, p PDU) []byte {
	t.Helper()
	b, err := Encode(p)
	if err != nil {
		t.Fatalf("Encode(%v): %v", p.Command, err)
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	for _, p := range samplePDUs() {
		b := mustEncode(t, p)
		if got := binary.BigEndian.Uint32(b); int(got) != len(b) {
			t.Fatalf("%v: command_length %d, encoded %d", p.Command, got, len(b))
		}
		q, err := Decode(b)
		if err != nil {
			t.Fatalf("Decode(%v): %v", p.Command, err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("%v: round trip\n got %#v\nwant %#v", p.Command, q, p)
		}
		r, err := ReadPDU(bytes.NewReader(b))
		if err != nil || !reflect.DeepEqual(r, q) {
			t.Fatalf("ReadPDU(%v) = %#v, %v", p.Command, r, err)
		}
	}
}

func TestKnownBytes(t *testing.T) {
	// enquire_link, sequence 1: the 16 octets any SMPP stack sends.
	want := []byte{0, 0, 0, 16, 0, 0, 0, 0x15, 0, 0, 0, 0, 0, 0, 0, 1}
	if got := mustEncode(t, PDU{Command: EnquireLink, Seq: 1}); !bytes.Equal(got, want) {
		t.Fatalf("enquire_link = % x", got)
	}
	// submit_sm_resp "7", sequence 2.
	want = []byte{0, 0, 0, 18, 0x80, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 2, '7', 0}
	if got := mustEncode(t, PDU{Command: SubmitSMResp, Seq: 2, Body: &SMResp{MessageID: "7"}}); !bytes.Equal(got, want) {
		t.Fatalf("submit_sm_resp = % x", got)
	}
}

// withLen fixes command_length after a test edits an encoded PDU.
func withLen(b []byte) []byte {
	binary.BigEndian.PutUint32(b, uint32(len(b)))
	return b
}

func TestDecodeRejects(t *testing.T) {
	sub := mustEncode(t, samplePDUs()[3])
	dlr := mustEncode(t, samplePDUs()[6])
	bind := mustEncode(t, samplePDUs()[0])
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"short header", []byte{0, 0, 0, 15, 0, 0, 0, 0x15, 0, 0, 0, 0, 0, 0, 0}, ErrLength},
		{"length says more", append([]byte{0, 0, 0, 17}, make([]byte, 12)...), ErrLength},
		{"length says less", withLen(append(mustEncode(t, PDU{Command: EnquireLink}), 0))[0:16], ErrLength},
		{"body on enquire_link", withLen(append(mustEncode(t, PDU{Command: EnquireLink}), 0)), ErrMalformed},
		{"trailing octets after bind", withLen(append(bytes.Clone(bind), 1)), ErrMalformed},
		{"truncated submit", withLen(bytes.Clone(sub[:30])), ErrMalformed},
		{"no NUL in system_id", withLen(append(bytes.Clone(bind[:16]), strings.Repeat("a", 40)...)), ErrMalformed},
		{"source_addr too long", withLen(append(append(bytes.Clone(sub[:17]), 5, 0), strings.Repeat("1", 21)+"\x00"...)), ErrMalformed},
		{"bad validity length", badValidity(t), ErrMalformed},
		{"sm_length past end", withLen(bytes.Clone(dlr[:len(dlr)-30])), ErrMalformed},
		{"TLV longer than body", withLen(append(bytes.Clone(sub), 0x04, 0x24, 0, 9, 1)), ErrMalformed},
		{"stray TLV octets", withLen(append(bytes.Clone(sub), 0x04)), ErrMalformed},
		{"message_state of 2 octets", withLen(append(bytes.Clone(sub), 0x04, 0x27, 0, 2, 1, 2)), ErrMalformed},
		{"submit_sm_resp OK without body", withLen(mustEncode(t, PDU{Command: SubmitSMResp})), ErrMalformed},
		{"message_id of 65 characters", withLen(mustEncodeRaw(SubmitSMResp, strings.Repeat("9", 65)+"\x00")), ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(c.b)
			if !errors.Is(err, c.want) {
				t.Fatalf("Decode = %v; want %v", err, c.want)
			}
		})
	}
}

func mustEncodeRaw(cmd CommandID, body string) []byte {
	b := make([]byte, HeaderLen, HeaderLen+len(body))
	binary.BigEndian.PutUint32(b[4:], uint32(cmd))
	return append(b, body...)
}

func badValidity(t *testing.T) []byte {
	sm := *samplePDUs()[3].Body.(*SM)
	sm.ValidityPeriod = ""
	b := mustEncode(t, PDU{Command: SubmitSM, Body: &sm})
	// The validity_period NUL sits right after the (empty) schedule time's.
	i := bytes.Index(b, []byte{0, 0, 1, 0, 0}) // schedule NUL, validity NUL, registered_delivery...
	if i < 0 {
		t.Fatal("layout changed")
	}
	out := append(bytes.Clone(b[:i+1]), "2611"...)
	out = append(out, b[i+1:]...)
	return withLen(out)
}

func TestDecodeKeepsHeaderOnBadBody(t *testing.T) {
	b := withLen(append(mustEncode(t, PDU{Command: DeliverSM, Seq: 77, Body: &SM{}}), 0xFF))
	p, err := Decode(b)
	if !errors.Is(err, ErrMalformed) || p.Command != DeliverSM || p.Seq != 77 || p.Body != nil {
		t.Fatalf("Decode = %+v, %v", p, err)
	}
}

func TestReadPDUBounds(t *testing.T) {
	for _, n := range []uint32{0, 15, MaxPDULen + 1, 0xFFFFFFFF} {
		head := binary.BigEndian.AppendUint32(nil, n)
		r := io.MultiReader(bytes.NewReader(head), bytes.NewReader(make([]byte, 64)))
		allocs := testing.AllocsPerRun(1, func() { _, _ = ReadPDU(r) })
		_, err := ReadPDU(io.MultiReader(bytes.NewReader(head), bytes.NewReader(make([]byte, 64))))
		if !errors.Is(err, ErrLength) {
			t.Fatalf("length %d: %v", n, err)
		}
		if allocs > 10 {
			t.Fatalf("length %d: %v allocations", n, allocs)
		}
	}
	// A length that is in bounds but never arrives is an I/O error.
	head := binary.BigEndian.AppendUint32(nil, 100)
	if _, err := ReadPDU(bytes.NewReader(append(head, 1, 2, 3))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated stream: %v", err)
	}
}

func TestEncodeRefuses(t *testing.T) {
	cases := map[string]PDU{
		"system_id too long": {Command: BindTransceiver, Body: &Bind{SystemID: strings.Repeat("a", 16)}},
		"password too long":  {Command: BindTransceiver, Body: &Bind{Password: "123456789"}},
		"NUL in address":     {Command: SubmitSM, Body: &SM{DestAddr: "55\x0011"}},
		"long short_message": {Command: SubmitSM, Body: &SM{ShortMessage: make([]byte, 255)}},
		"bad validity":       {Command: SubmitSM, Body: &SM{ValidityPeriod: "1h"}},
		"message_state size": {Command: DeliverSM, Body: &SM{TLVs: TLVs{{Tag: TagMessageState, Value: []byte{1, 2}}}}},
		"TLV too long":       {Command: DeliverSM, Body: &SM{TLVs: TLVs{{Tag: TagMessagePayload, Value: make([]byte, 70000)}}}},
	}
	for name, p := range cases {
		if _, err := Encode(p); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
}

func TestTLVAccessors(t *testing.T) {
	ts := TLVs{StringTLV(TagReceiptedMessageID, "42"), ByteTLV(TagMessageState, 2), Uint16TLV(TagSARMsgRefNum, 0x1234),
		{Tag: 0x1400, Value: []byte("noterm")}}
	if s, ok := ts.CString(TagReceiptedMessageID); !ok || s != "42" {
		t.Fatalf("CString = %q, %v", s, ok)
	}
	if s, ok := ts.CString(0x1400); !ok || s != "noterm" {
		t.Fatalf("CString without NUL = %q, %v", s, ok)
	}
	if v, ok := ts.Byte(TagMessageState); !ok || v != 2 {
		t.Fatalf("Byte = %d, %v", v, ok)
	}
	if v, ok := ts.Uint16(TagSARMsgRefNum); !ok || v != 0x1234 {
		t.Fatalf("Uint16 = %x, %v", v, ok)
	}
	if _, ok := ts.Byte(TagSARTotalSegments); ok {
		t.Fatal("absent tag found")
	}
}

func TestNames(t *testing.T) {
	if SubmitSM.String() != "submit_sm" || CommandID(0x103).String() != "command_0x00000103" {
		t.Fatal("command names")
	}
	if StatusThrottled.String() != "ESME_RTHROTTLED" || Status(0x400).String() != "command_status 0x00000400" {
		t.Fatal("status names")
	}
	if !DeliverSMResp.IsResponse() || DeliverSM.IsResponse() || DeliverSM.Resp() != DeliverSMResp {
		t.Fatal("response bit")
	}
}
