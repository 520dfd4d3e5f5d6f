package smpp

import (
	"context"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// query_sm asks about messages whose receipt never came: final states are
// reported like receipts, the rest left for later.
func TestQuery(t *testing.T) {
	f := newFakeSMSC(t)
	f.set(func(f *fakeSMSC) {
		f.states = map[string]pdu.QueryResp{
			"M1": {MessageState: pdu.StateDelivered, FinalDate: "261121100100000+"},
			"M2": {MessageState: pdu.StateEnroute},
			"M3": {MessageState: pdu.StateUndeliverable, ErrorCode: 11},
			"M5": {MessageState: pdu.StateUnknown},
		}
	})
	c := startClient(t, testConfig(f.addr()), newSink())
	got, err := c.Query(context.Background(), []provider.QueryRef{{Ref: "M1", From: "Acme"}, {Ref: "M2"},
		{Ref: "M3", From: "5511999990000"}, {Ref: "M4"}, {Ref: "M5"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Ref != "M1" || got[0].Status != domain.Delivered ||
		got[1].Ref != "M3" || got[1].Status != domain.Failed || got[1].ErrorCode != "UNDELIVERED" || got[1].ErrorMessage != "err:011" {
		t.Fatalf("statuses %+v", got)
	}
	qs := f.count(func(f *fakeSMSC) int { return len(f.queries) })
	if qs != 5 {
		t.Fatalf("%d queries, want 5", qs)
	}
	f.set(func(f *fakeSMSC) {
		if q := f.queries[0]; q.SourceAddr != "Acme" || q.SourceTON != pdu.TONAlphanumeric {
			t.Errorf("the first query's source: %+v", q)
		}
		if q := f.queries[1]; q.SourceAddr != "MyShop" {
			t.Errorf("a query without a sender asks with the configured one: %+v", q)
		}
		if q := f.queries[2]; q.SourceAddr != "5511999990000" || q.SourceTON != pdu.TONInternational || q.SourceNPI != pdu.NPIISDN {
			t.Errorf("the third query's source: %+v", q)
		}
	})
}
