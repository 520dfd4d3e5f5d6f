package smpp

import (
	"testing"

	"github.com/msgsvc/msgsvc/internal/pdu"
)

// FuzzReceipt feeds arbitrary octets through the decoder to the receipt
// parser: whatever a carrier sends as a deliver_sm, reading it as a
// receipt must never panic. (The codec itself is fuzzed in package pdu.)
func FuzzReceipt(f *testing.F) {
	for _, sm := range []*pdu.SM{
		receiptSM("id:0A1B sub:001 dlvrd:001 submit date:2611211000 done date:2611211005 stat:DELIVRD err:000 text:hi"),
		receiptSM("id:17 stat:", pdu.StringTLV(pdu.TagReceiptedMessageID, "11"), pdu.ByteTLV(pdu.TagMessageState, byte(pdu.StateRejected))),
		receiptSM("", pdu.ByteTLV(pdu.TagMessageState, 0xFF)),
	} {
		f.Add(mustEncode(f, pdu.PDU{Command: pdu.DeliverSM, Seq: 1, Body: sm}))
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := pdu.Decode(b)
		if err != nil {
			return
		}
		if sm, ok := p.Body.(*pdu.SM); ok {
			_, _ = parseReceipt(sm)
		}
	})
}
