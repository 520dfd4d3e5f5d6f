package smpp

import (
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/pdu"
	"testing"
	"time"
)

func receiptSM(text string, tlvs ...pdu.TLV) *pdu.SM {
	return &pdu.SM{ESMClass: pdu.ESMClassReceipt, ShortMessage: []byte(text), TLVs: tlvs}
}

func TestParseReceiptText(t *testing.T) {
	sm := receiptSM("id:0A1B sub:001 dlvrd:000 submit date:2611211000 done date:2611211005 stat:UNDELIV err:034 text:stat:DELIVRD id:x")
	r, err := parseReceipt(sm)
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != "0A1B" || r.Stat != "UNDELIV" || r.Err != "034" || r.DoneDate != "2611211005" || r.HasState {
		t.Fatalf("receipt = %+v", r)
	}
	st, final := r.outcome(time.Unix(100, 0))
	if !final || st.Ref != "0A1B" || st.Status != "FAILED" || st.ErrorCode != "UNDELIVERED" ||
		st.ErrorMessage != "stat:UNDELIV err:034" || !st.At.Equal(time.Unix(100, 0)) {
		t.Fatalf("outcome = %+v, %v", st, final)
	}
}

func TestParseReceiptPrefersTLVs(t *testing.T) {
	// The text says id 17 (decimal) and DELIVRD; the TLVs say 11 and
	// REJECTED, as an SMSC that prints ids in another base would.
	sm := receiptSM("id:17 sub:001 dlvrd:001 submit date:2611211000 done date:2611211005 stat:DELIVRD err:000 text:",
		pdu.StringTLV(pdu.TagReceiptedMessageID, "11"), pdu.ByteTLV(pdu.TagMessageState, byte(pdu.StateRejected)))
	r, err := parseReceipt(sm)
	if err != nil {
		t.Fatal(err)
	}
	st, final := r.outcome(time.Time{})
	if !final || st.Ref != "11" || st.Status != "FAILED" || st.ErrorCode != "REJECTED" {
		t.Fatalf("outcome = %+v, %v", st, final)
	}
}

func TestReceiptOutcomes(t *testing.T) {
	cases := []struct {
		stat      string
		state     pdu.MessageState
		status    domain.Status
		errorCode string
		final     bool
	}{
		{"DELIVRD", pdu.StateDelivered, "DELIVERED", "", true},
		{"UNDELIV", pdu.StateUndeliverable, "FAILED", "UNDELIVERED", true},
		{"EXPIRED", pdu.StateExpired, "FAILED", "EXPIRED", true},
		{"REJECTD", pdu.StateRejected, "FAILED", "REJECTED", true},
		{"DELETED", pdu.StateDeleted, "FAILED", "DELETED", true},
		{"UNKNOWN", pdu.StateUnknown, "FAILED", "UNKNOWN", true},
		{"ACCEPTD", pdu.StateAccepted, "", "", false},
		{"ENROUTE", pdu.StateEnroute, "", "", false},
	}
	for _, c := range cases {
		// The text alone, and the TLV alone (with a misleading text).
		for _, sm := range []*pdu.SM{
			receiptSM("id:9 stat:" + c.stat + " err:000"),
			receiptSM("id:9 stat:BOGUS", pdu.ByteTLV(pdu.TagMessageState, byte(c.state))),
		} {
			r, err := parseReceipt(sm)
			if err != nil {
				t.Fatalf("%s: %v", c.stat, err)
			}
			st, final := r.outcome(time.Time{})
			if final != c.final || st.Status != c.status || st.ErrorCode != c.errorCode || st.Ref != "9" {
				t.Errorf("%s (%q): outcome %+v, %v", c.stat, sm.ShortMessage, st, final)
			}
		}
	}
	r, _ := parseReceipt(receiptSM("id:9 stat:WHATEVER"))
	if st, final := r.outcome(time.Time{}); !final || st.ErrorCode != "UNKNOWN" {
		t.Errorf("unknown stat word: %+v", st)
	}
}

func TestParseReceiptVariants(t *testing.T) {
	// Upper-case keys, the id only in a TLV, the text in message_payload.
	r, err := parseReceipt(&pdu.SM{ESMClass: pdu.ESMClassReceipt, TLVs: pdu.TLVs{pdu.StringTLV(pdu.TagReceiptedMessageID, "m-1"),
		{Tag: pdu.TagMessagePayload, Value: []byte("ID:zzz SUB:001 DLVRD:001 STAT:delivrd ERR:000")}}})
	if err != nil || r.ID != "m-1" || r.Stat != "DELIVRD" {
		t.Fatalf("receipt = %+v, %v", r, err)
	}
	// UCS-2 receipt text.
	r, err = parseReceipt(&pdu.SM{DataCoding: pdu.CodingUCS2, ShortMessage: []byte{0, 'i', 0, 'd', 0, ':', 0, '5', 0, ' ',
		0, 's', 0, 't', 0, 'a', 0, 't', 0, ':', 0, 'E', 0, 'X', 0, 'P', 0, 'I', 0, 'R', 0, 'E', 0, 'D'}})
	if err != nil || r.ID != "5" || r.Stat != "EXPIRED" {
		t.Fatalf("UCS-2 receipt = %+v, %v", r, err)
	}
	for _, bad := range []*pdu.SM{receiptSM("sub:001 stat:DELIVRD"), receiptSM("id:1 sub:001"), receiptSM("")} {
		if _, err := parseReceipt(bad); err == nil {
			t.Errorf("parseReceipt(%q) accepted", bad.ShortMessage)
		}
	}
}
