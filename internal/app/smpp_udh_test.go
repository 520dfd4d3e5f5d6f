package app

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/pdu"
)

// A part with a user data header is charged one segment, so it must fit
// one: a 6-octet header and 1,524 characters in message_payload is refused
// ESME_RINVMSGLEN, with nothing stored or charged; a part of exactly 140
// octets with its header passes and is charged one segment.
func TestSMPPOversizeUDHPartRefused(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := smppEnv(t, d)
		ctx := context.Background()
		sys, pw := e.smppUser(e.account.ID, "live", "udhpart")
		c := e.dialBound(pdu.BindTransceiver, sys, pw)
		before, err := e.st.Account(ctx, e.account.ID)
		if err != nil {
			t.Fatal(err)
		}
		header := []byte{5, 0, 3, 7, 2, 1}
		for _, sm := range []*pdu.SM{
			{ESMClass: pdu.ESMClassUDHI, TLVs: pdu.TLVs{{Tag: pdu.TagMessagePayload, Value: append(header, strings.Repeat("a", 1524)...)}}},
			{ESMClass: pdu.ESMClassUDHI, ShortMessage: append(header, strings.Repeat("a", 154)...)},                                     // 141 octets packed
			{ESMClass: pdu.ESMClassUDHI, DataCoding: pdu.CodingUCS2, ShortMessage: append(header, make([]byte, 136)...)},                // 142 octets
			{ESMClass: pdu.ESMClassUDHI, DataCoding: pdu.CodingLatin1, ShortMessage: append(header, bytes.Repeat([]byte{0xE2}, 68)...)}, // â is UCS-2 on the air: 142 octets
		} {
			sm.DestAddr = "5511999990000"
			if r := c.Call(pdu.SubmitSM, sm); r.Status != pdu.StatusInvMsgLen || r.Body != nil {
				t.Fatalf("an oversize part: %s, want ESME_RINVMSGLEN", r.Status)
			}
		}
		after, _ := e.st.Account(ctx, e.account.ID)
		list := e.do("GET", "/api/v1/integration/messages", e.liveKey, nil)
		if after.Balance != before.Balance || list.status != 200 || strings.Contains(string(list.body), "msg_") {
			t.Fatalf("after the refusals: balance %d (was %d), list %d %s", after.Balance, before.Balance, list.status, list.body)
		}
		// 134 octets of UCS-2 (67 characters) after the 6-octet header: 140.
		ucs := make([]byte, 0, 134)
		for range 67 {
			ucs = append(ucs, 0x04, 0x1F)
		}
		for _, sm := range []*pdu.SM{
			{ESMClass: pdu.ESMClassUDHI, DataCoding: pdu.CodingUCS2, ShortMessage: append(header, ucs...)},
			{ESMClass: pdu.ESMClassUDHI, TLVs: pdu.TLVs{{Tag: pdu.TagMessagePayload, Value: append(header, strings.Repeat("a", 153)...)}}},
		} {
			sm.DestAddr = "5511999990000"
			r := c.Call(pdu.SubmitSM, sm)
			if r.Status != pdu.StatusOK {
				t.Fatalf("a part of 140 octets: %s", r.Status)
			}
			m, err := e.st.MessageByID(ctx, r.Body.(*pdu.SMResp).MessageID)
			if err != nil || m.Segments != 1 || m.Content.UDH != "050003070201" {
				t.Fatalf("the 140-octet part: %d segments, header %q, %v", m.Segments, m.Content.UDH, err)
			}
			now, _ := e.st.Account(ctx, e.account.ID)
			if m.Credits <= 0 || before.Balance-now.Balance != m.Credits {
				t.Fatalf("charged %d (the message says %d)", before.Balance-now.Balance, m.Credits)
			}
			before = now
		}
	})
}
