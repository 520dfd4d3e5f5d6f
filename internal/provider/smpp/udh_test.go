package smpp

import (
	"bytes"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/pdu"
)

// A part its sender cut (an SMPP customer's) goes out as one submit_sm
// with the sender's header, however short or long its text.
func TestSubmitKeepsTheSendersUDH(t *testing.T) {
	f := newFakeSMSC(t)
	c := startClient(t, testConfig(f.addr()), newSink())
	gsm := outSMS("m1", "5511999990000", "second part")
	gsm.Content.UDH = "050003070302"
	ucs := outSMS("m2", "5511999990010", "часть")
	ucs.Content.UDH = "06080401020202"
	mustOK(t, submit(t, c, gsm, ucs))
	subs := f.submitList()
	if len(subs) != 2 {
		t.Fatalf("%d submit_sm, want one per part", len(subs))
	}
	want := map[string][]byte{"5511999990000": {5, 0, 3, 7, 3, 2}, "5511999990010": {6, 8, 4, 1, 2, 2, 2}}
	for _, s := range subs {
		udh := want[s.sm.DestAddr]
		if s.sm.ESMClass != pdu.ESMClassUDHI || !bytes.HasPrefix(s.sm.ShortMessage, udh) {
			t.Fatalf("%s: esm_class %#x message % x", s.sm.DestAddr, s.sm.ESMClass, s.sm.ShortMessage)
		}
		text := pdu.DecodeUserData(s.sm.DataCoding, s.sm.ShortMessage[len(udh):], 0, pdu.Unpacked)
		if text != map[string]string{"5511999990000": "second part", "5511999990010": "часть"}[s.sm.DestAddr] {
			t.Fatalf("%s: text %q", s.sm.DestAddr, text)
		}
	}
	bad := outSMS("m3", "5511999990000", "x")
	bad.Content.UDH = "0500"
	if res := submit(t, c, bad); res[0].Err == nil {
		t.Fatal("a header whose length octet lies was sent")
	}
}

// A part with a UDH was charged one segment, so no more than one goes to
// the carrier: one that does not fit 140 octets on the air with its header
// (even if it fits the 254 of short_message) fails for good, unsent.
func TestOversizeUDHPartNotSent(t *testing.T) {
	f := newFakeSMSC(t)
	c := startClient(t, testConfig(f.addr()), newSink())
	fits := outSMS("m1", "5511999990000", strings.Repeat("a", 153))
	fits.Content.UDH = "050003070201"
	gsm := outSMS("m2", "5511999990000", strings.Repeat("a", 154))
	gsm.Content.UDH = "050003070201"
	long := outSMS("m3", "5511999990000", strings.Repeat("a", 248))
	long.Content.UDH = "050003070201"
	ucs := outSMS("m4", "5511999990010", strings.Repeat("я", 68))
	ucs.Content.UDH = "050003070201"
	res := submit(t, c, fits, gsm, long, ucs)
	if res[0].Err != nil {
		t.Fatalf("a part of 140 octets: %v", res[0].Err)
	}
	for i, r := range res[1:] {
		if r.Err == nil || r.Err.Temporary {
			t.Fatalf("oversize part %d: %+v, want a permanent refusal", i+2, r.Err)
		}
	}
	if n := len(f.submitList()); n != 1 {
		t.Fatalf("%d submit_sm reached the carrier, want 1", n)
	}
}
