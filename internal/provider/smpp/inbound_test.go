package smpp

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/channel/sms"
	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// deliverAndWait sends a deliver_sm from the fake and waits for its answer.
func deliverAndWait(t *testing.T, f *fakeSMSC, fc *fakeConn, sm *pdu.SM) pdu.Status {
	t.Helper()
	seq := fc.request(pdu.DeliverSM, sm)
	var resp pdu.PDU
	eventually(t, "deliver_sm_resp", func() bool {
		var ok bool
		resp, ok = f.respTo(pdu.DeliverSMResp, seq)
		return ok
	})
	return resp.Status
}

func moReply(coding byte, msg []byte, udh []byte) *pdu.SM {
	sm := &pdu.SM{SourceTON: 1, SourceNPI: 1, SourceAddr: "5511999990000", DestTON: 5, DestAddr: "MyShop",
		DataCoding: coding, ShortMessage: append(append([]byte(nil), udh...), msg...)}
	if udh != nil {
		sm.ESMClass = pdu.ESMClassUDHI
	}
	return sm
}

func TestInboundMultipartReply(t *testing.T) {
	f := newFakeSMSC(t)
	sink := newSink()
	c := startClient(t, testConfig(f.addr()), sink)
	fc := f.conn(0)
	text := strings.Repeat("Reply text that is long; ", 15) // 375 septets: 3 parts
	parts, err := pdu.EncodeText(text, 42, pdu.Unpacked)
	if err != nil || len(parts) != 3 {
		t.Fatalf("EncodeText: %d parts, %v", len(parts), err)
	}
	// The handover must happen before the last part is answered.
	var lastSeq atomic.Uint32
	var answeredEarly atomic.Bool
	sink.OnInbound(func(provider.Inbound) {
		if _, ok := f.respTo(pdu.DeliverSMResp, lastSeq.Load()); ok {
			answeredEarly.Store(true)
		}
	})
	for _, i := range []int{1, 0} { // out of order
		sm := moReply(pdu.CodingDefault, parts[i].Message, nil)
		sm.ESMClass = parts[i].ESMClass
		if st := deliverAndWait(t, f, fc, sm); st != pdu.StatusOK {
			t.Fatalf("part %d answered %v", i+1, st)
		}
	}
	if _, in := sink.Got(); len(in) != 0 {
		t.Fatalf("incomplete message handed over: %+v", in)
	}
	if h := c.Health(); h.Reassembling != 1 {
		t.Fatalf("health = %+v", h)
	}
	sm := moReply(pdu.CodingDefault, parts[2].Message, nil)
	sm.ESMClass = parts[2].ESMClass
	lastSeq.Store(fc.seq.Load() + 1001) // the sequence number fc.request will use
	if st := deliverAndWait(t, f, fc, sm); st != pdu.StatusOK {
		t.Fatalf("last part answered %v", st)
	}
	_, in := sink.Got()
	if len(in) != 1 {
		t.Fatalf("inbound = %+v", in)
	}
	got := in[0]
	if got.Body != text || got.From != "5511999990000" || got.To != "MyShop" || got.Channel != "SMS" || got.At.IsZero() {
		t.Fatalf("inbound = %+v", got)
	}
	if answeredEarly.Load() {
		t.Fatal("the last part was acknowledged before the Sink had the message")
	}
	if h := c.Health(); h.Reassembling != 0 {
		t.Fatalf("health = %+v", h)
	}
}

func TestInboundCodingsAndReferences(t *testing.T) {
	f := newFakeSMSC(t)
	sink := newSink()
	startClient(t, testConfig(f.addr()), sink)
	fc := f.conn(0)

	// UCS-2 with a 16-bit reference, a surrogate pair cut between parts.
	u := sms.EncodeUCS2("ab😀cd")
	for i, chunk := range [][]byte{u[:6], u[6:]} {
		deliverAndWait(t, f, fc, moReply(pdu.CodingUCS2, chunk, pdu.ConcatUDH16(0xABCD, 2, uint8(i+1))))
	}
	// Latin-1 in two parts joined by sar_ TLVs.
	for i, chunk := range []string{"caf\xe9 ", "cr\xe8me"} {
		sm := moReply(pdu.CodingLatin1, []byte(chunk), nil)
		sm.TLVs = pdu.TLVs{pdu.Uint16TLV(pdu.TagSARMsgRefNum, 7), pdu.ByteTLV(pdu.TagSARTotalSegments, 2), pdu.ByteTLV(pdu.TagSARSegmentSeqnum, uint8(i+1))}
		deliverAndWait(t, f, fc, sm)
	}
	// One part of ASCII, and one in message_payload.
	deliverAndWait(t, f, fc, moReply(pdu.CodingASCII, []byte("STOP"), nil))
	payload := moReply(pdu.CodingDefault, nil, nil)
	payload.TLVs = pdu.TLVs{{Tag: pdu.TagMessagePayload, Value: []byte("from payload")}}
	deliverAndWait(t, f, fc, payload)

	_, in := sink.Got()
	var bodies []string
	for _, m := range in {
		bodies = append(bodies, m.Body)
	}
	want := []string{"ab😀cd", "café crème", "STOP", "from payload"}
	if strings.Join(bodies, "|") != strings.Join(want, "|") {
		t.Fatalf("bodies = %q; want %q", bodies, want)
	}
}

func TestInboundPacked(t *testing.T) {
	f := newFakeSMSC(t)
	sink := newSink()
	cfg := testConfig(f.addr())
	cfg.GSMPacking = pdu.Packed
	startClient(t, cfg, sink)
	fc := f.conn(0)
	text := strings.Repeat("Packed {reply} text! ", 12) // 2 parts with escapes
	parts, err := pdu.EncodeText(text, 9, pdu.Packed)
	if err != nil || len(parts) != 2 {
		t.Fatalf("EncodeText: %d parts, %v", len(parts), err)
	}
	for _, p := range parts {
		sm := moReply(p.DataCoding, p.Message, nil)
		sm.ESMClass = p.ESMClass
		deliverAndWait(t, f, fc, sm)
	}
	single, _ := pdu.EncodeText("Hi there", 0, pdu.Packed)
	deliverAndWait(t, f, fc, moReply(pdu.CodingDefault, single[0].Message, nil))
	_, in := sink.Got()
	if len(in) != 2 || in[0].Body != text || in[1].Body != "Hi there" {
		t.Fatalf("inbound = %+v", in)
	}
}

func TestInboundSinkFailureAsksForRetry(t *testing.T) {
	f := newFakeSMSC(t)
	sink := newSink()
	sink.FailInbound(1)
	startClient(t, testConfig(f.addr()), sink)
	fc := f.conn(0)
	p1 := moReply(pdu.CodingASCII, []byte("one "), pdu.ConcatUDH8(3, 2, 1))
	p2 := moReply(pdu.CodingASCII, []byte("two"), pdu.ConcatUDH8(3, 2, 2))
	if st := deliverAndWait(t, f, fc, p1); st != pdu.StatusOK {
		t.Fatalf("part 1: %v", st)
	}
	if st := deliverAndWait(t, f, fc, p2); st != pdu.StatusXTAppn {
		t.Fatalf("part 2 with the Sink down: %v; want ESME_RX_T_APPN", st)
	}
	// The SMSC sends the last part again; the first is still held.
	if st := deliverAndWait(t, f, fc, p2); st != pdu.StatusOK {
		t.Fatalf("part 2 again: %v", st)
	}
	_, in := sink.Got()
	if len(in) != 1 || in[0].Body != "one two" {
		t.Fatalf("inbound = %+v", in)
	}
	// Unreadable: a UDH longer than the message, a part number past the total.
	if st := deliverAndWait(t, f, fc, moReply(pdu.CodingASCII, nil, []byte{9, 0, 3})); st != pdu.StatusXPAppn {
		t.Fatalf("broken UDH: %v", st)
	}
	if st := deliverAndWait(t, f, fc, moReply(pdu.CodingASCII, []byte("x"), pdu.ConcatUDH8(4, 2, 3))); st != pdu.StatusXPAppn {
		t.Fatalf("part 3 of 2: %v", st)
	}
}

func TestReassembler(t *testing.T) {
	r := newReassembler(time.Minute)
	t0 := time.Unix(1000, 0)
	k := reasmKey{From: "1", To: "2", Ref: 5, Total: 2}
	if _, _, res := r.add(k, 0, 0, nil, t0); res != partInvalid {
		t.Fatal("part 0 accepted")
	}
	if _, _, res := r.add(k, 2, 0, []byte("b"), t0); res != partHeld {
		t.Fatal("part 2 not held")
	}
	if _, _, res := r.add(k, 2, 0, []byte("B"), t0); res != partHeld {
		t.Fatal("duplicate part 2 not held")
	}
	whole, _, res := r.add(k, 1, 8, []byte("a"), t0)
	if res != partComplete || string(whole) != "aB" {
		t.Fatalf("complete = %q, %v", whole, res)
	}
	if _, _, res := r.add(k, 1, 0, []byte("a"), t0); res != partBusy {
		t.Fatal("a set being delivered took a part")
	}
	r.finish(k, false)
	if whole, coding, res := r.add(k, 2, 0, []byte("b"), t0); res != partComplete || string(whole) != "ab" || coding != 8 {
		t.Fatalf("after a failed handover: %q %d %v", whole, coding, res)
	}
	r.finish(k, true)
	if r.len() != 0 {
		t.Fatal("delivered set kept")
	}
	// Incomplete sets expire a timeout after their last part.
	r.add(k, 1, 0, []byte("a"), t0)
	r.add(reasmKey{From: "3", Total: 2}, 1, 0, []byte("x"), t0.Add(30*time.Second))
	if n := r.expire(t0.Add(59 * time.Second)); n != 0 {
		t.Fatalf("expired %d early", n)
	}
	if n := r.expire(t0.Add(time.Minute)); n != 1 || r.len() != 1 {
		t.Fatalf("expired %d, %d left", n, r.len())
	}
}

// TestInboundBurstBeyondLimitAllAccepted: a burst of deliver_sm larger
// than the bind's inbound limit, while the Sink is slow, is not refused:
// the client stops reading until handlers finish, and every deliver_sm is
// answered ESME_ROK in the end, none lost.
func TestInboundBurstBeyondLimitAllAccepted(t *testing.T) {
	const burst = maxInboundPerBind + 44
	f := newFakeSMSC(t)
	sink := newSink()
	c := startClient(t, testConfig(f.addr()), sink)
	fc := f.conn(0)
	release := make(chan struct{})
	var inside atomic.Int64
	sink.OnInbound(func(provider.Inbound) {
		inside.Add(1)
		<-release // a slow store
	})
	seqs := make(chan uint32, burst)
	go func() {
		for i := range burst {
			sm := moReply(pdu.CodingDefault, []byte(fmt.Sprintf("reply %d", i)), nil)
			seqs <- fc.request(pdu.DeliverSM, sm)
		}
		close(seqs)
	}()
	eventually(t, "the inbound limit taken by handlers", func() bool { return inside.Load() >= maxInboundPerBind })
	close(release)
	var all []uint32
	for seq := range seqs {
		all = append(all, seq)
	}
	for _, seq := range all {
		var resp pdu.PDU
		eventually(t, "deliver_sm_resp", func() bool {
			var ok bool
			resp, ok = f.respTo(pdu.DeliverSMResp, seq)
			return ok
		})
		if resp.Status != pdu.StatusOK {
			t.Fatalf("deliver_sm %d answered %v, want ESME_ROK", seq, resp.Status)
		}
	}
	if _, in := sink.Got(); len(in) != burst {
		t.Fatalf("sink got %d inbound messages, want %d", len(in), burst)
	}
	if h := c.Health(); h.InboundPaused == 0 || len(h.InboundRefused) != 0 {
		t.Errorf("health: %d pauses, refused %v; want pauses counted and nothing refused", h.InboundPaused, h.InboundRefused)
	}
}

// TestInboundRefusalCounted: a deliver_sm the client cannot take (its
// store is down) is answered ESME_RX_T_APPN and counted by status.
func TestInboundRefusalCounted(t *testing.T) {
	f := newFakeSMSC(t)
	sink := newSink()
	c := startClient(t, testConfig(f.addr()), sink)
	sink.FailInbound(1)
	if st := deliverAndWait(t, f, f.conn(0), moReply(pdu.CodingDefault, []byte("hello"), nil)); st != pdu.StatusXTAppn {
		t.Fatalf("answered %v, want ESME_RX_T_APPN", st)
	}
	if got := c.Health().InboundRefused[pdu.StatusXTAppn.String()]; got != 1 {
		t.Fatalf("refusals counted: %v, want 1 under %s", c.Health().InboundRefused, pdu.StatusXTAppn)
	}
}
