package smppserver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	smpp "github.com/msgsvc/msgsvc/internal/pdu"
)

// writeReceipt stores a receipt of user as the tracker's transaction does:
// leased to this node and handed over after the commit when the server
// says so, else unleased in the table with a wake. It reports whether the
// row was handed over.
func (f *fixture) writeReceipt(user string, n int, at time.Time) bool {
	it := domain.SMPPItem{ID: fmt.Sprintf("smd_%02d", n), UserID: user, MessageID: fmt.Sprintf("msg_%02d", n),
		Source: "5511999990000", Dest: "ACME", ESMClass: 4, Text: "id:x", State: 2, CreatedAt: at, NextAttemptAt: at}
	owner, until, ok := f.srv.LeaseReceipt(user)
	if ok {
		it.LeaseOwner, it.NextAttemptAt = owner, until
	}
	f.items.mu.Lock()
	f.items.rows = append(f.items.rows, it)
	f.items.mu.Unlock()
	if ok {
		f.srv.HandReceipts(context.Background(), []domain.SMPPItem{it})
	} else {
		f.srv.Wake()
	}
	return ok
}

func (f *fakeItems) claims() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.claimed
}

func receiptOrder(ps []smpp.PDU) string {
	var ids []string
	for _, p := range ps {
		rid, _ := p.Body.(*smpp.SM).TLVs.CString(smpp.TagReceiptedMessageID)
		ids = append(ids, rid)
	}
	return fmt.Sprint(ids)
}

// A receipt of a user with a receiving bind here goes to it without a
// claim, after what waited in the table for it, and is deleted once
// acknowledged; a user bound nowhere here has its receipts wait in the
// table.
func TestReceiptsHandedOverWithoutAClaim(t *testing.T) {
	f := start(t, func(c *Config) { c.Poll = time.Hour })
	t0 := time.Now()
	if f.writeReceipt("smu_a", 0, t0) {
		t.Fatal("a receipt handed over with no bind of its user")
	}
	rx := f.bound(t, smpp.BindReceiver, "acme")
	rx.WaitDelivered(1)
	waitUntil(t, func() bool { _, _, ok := f.srv.LeaseReceipt("smu_a"); return ok })
	claimed := f.items.claims()
	for i := 1; i < 6; i++ {
		if !f.writeReceipt("smu_a", i, t0.Add(time.Duration(i)*time.Millisecond)) {
			t.Fatalf("receipt %d of a bound user not handed over", i)
		}
	}
	if got := receiptOrder(rx.WaitDelivered(6)); got != "[msg_00 msg_01 msg_02 msg_03 msg_04 msg_05]" {
		t.Fatalf("delivered %s, want oldest first", got)
	}
	waitUntil(t, func() bool { return f.items.left() == 0 })
	if n := f.items.claims(); n != claimed {
		t.Fatalf("%d rows handed over were claimed as well", n-claimed)
	}
	if _, _, ok := f.srv.LeaseReceipt("smu_b"); ok {
		t.Fatal("a user with no bind here would have its receipts handed over")
	}
}

// Rows past what a user's lane holds go to the table, and so do the user's
// next rows until a claim has taken them: every row arrives once, oldest
// first, and rows are handed over again afterwards.
func TestFullLaneSendsNewRowsToTheTable(t *testing.T) {
	f := start(t, func(c *Config) { c.Window = 2 })
	rx := f.bound(t, smpp.BindReceiver, "acme")
	rx.AutoAck = false
	waitUntil(t, func() bool { _, _, ok := f.srv.LeaseReceipt("smu_a"); return ok })
	t0 := time.Now()
	const n = 3*laneCap*2 + 3
	for i := 0; i < n; i++ {
		f.writeReceipt("smu_a", i, t0.Add(time.Duration(i)*time.Millisecond))
	}
	first := rx.WaitDelivered(2)
	waitUntil(t, func() bool { _, _, ok := f.srv.LeaseReceipt("smu_a"); return !ok })
	for _, p := range first {
		rx.Write(smpp.PDU{Command: smpp.DeliverSMResp, Seq: p.Seq, Body: &smpp.SMResp{}})
	}
	rx.AutoAck = true
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("msg_%02d", i)
	}
	if got := receiptOrder(rx.WaitDelivered(n)); got != fmt.Sprint(want) {
		t.Fatalf("delivered %s, want %v", got, want)
	}
	waitUntil(t, func() bool { return f.items.left() == 0 })
	waitUntil(t, func() bool { _, _, ok := f.srv.LeaseReceipt("smu_a"); return ok })
	if r := rx.Call(smpp.EnquireLink, nil); r.Status != smpp.StatusOK || len(rx.Delivered) != n {
		t.Fatalf("%d deliver_sm, want %d", len(rx.Delivered), n)
	}
}
