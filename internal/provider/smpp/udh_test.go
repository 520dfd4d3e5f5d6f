package smpp

import (
	"bytes"
	"testing"
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
		if s.sm.ESMClass != ESMClassUDHI || !bytes.HasPrefix(s.sm.ShortMessage, udh) {
			t.Fatalf("%s: esm_class %#x message % x", s.sm.DestAddr, s.sm.ESMClass, s.sm.ShortMessage)
		}
		text := decodeText(s.sm.DataCoding, s.sm.ShortMessage[len(udh):], 0, Unpacked)
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
