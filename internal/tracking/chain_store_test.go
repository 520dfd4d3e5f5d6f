package tracking_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
	"github.com/msgsvc/msgsvc/internal/tracking"
	"github.com/msgsvc/msgsvc/internal/txn"
)

// A sub-account's send through intake and its refunds through the
// tracker, on both dialects: every level gets back what it paid, and
// every balance equals its ledger's sum.
func TestChainRefundsOnStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Millisecond)
		clock := func() time.Time { return now }
		mk := func(parent string, price int64, billing domain.Billing) domain.Account {
			a := domain.Account{ID: id.New(id.Account, now), Name: "Tree", Tier: "pro", Currency: "EUR", CountryCode: "34",
				WebhookSecret: "whsec_tree", WAQualityTier: 1, CreatedAt: now, ParentID: parent, Reseller: true, Billing: billing,
				Prices: `{"home":{"smsSegment":` + itoa(price) + `}}`}
			if err := st.CreateAccount(ctx, a); err != nil {
				t.Fatal(err)
			}
			if _, err := bootstrap.AddCredits(ctx, st, a.ID, 10*ledger.Micro, ledger.TopUp, "opening", now); err != nil {
				t.Fatal(err)
			}
			got, err := st.Account(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		top := mk("", ledger.Micro, "")
		mid := mk(top.ID, 3*ledger.Micro/2, "")
		leaf := mk(mid.ID, 2*ledger.Micro, domain.BillDelivery)
		sibling := mk(mid.ID, 2*ledger.Micro, "") // billed on submit

		sends := intake.NewService(intake.Config{Store: st, Now: clock,
			Writer: txn.As(st, func(tx *store.Tx) intake.SendTx { return tx })})
		t.Cleanup(sends.Close)
		send := func(a domain.Account, to string) domain.Message {
			t.Helper()
			out, err := sends.Send(ctx, domain.Principal{Account: a, Kind: domain.CredentialAPIKey, CredentialID: "key_x",
				Env: domain.Live}, domain.SendRequest{Channel: domain.SMS, Recipients: []string{to}, Text: "hello"}, intake.SendOptions{})
			if err != nil {
				t.Fatalf("send: %v", err)
			}
			return out.Receipt.Messages[0].Message
		}
		rejected := send(leaf, "+34600000001")
		undelivered := send(leaf, "+34600000002")
		keptBySibling := send(sibling, "+34600000003")
		// Charged: the leaf 2 twice, the sibling 2, the mid 1.5 three
		// times, the top 1 three times.
		storetest.CheckBalance(t, st, leaf.ID, 6*ledger.Micro)
		storetest.CheckBalance(t, st, mid.ID, 10*ledger.Micro-9*ledger.Micro/2)
		storetest.CheckBalance(t, st, top.ID, 7*ledger.Micro)

		tr := tracking.NewTracker(tracking.Config{Store: st, Now: clock,
			Writer: tracking.Bind(st, func(tx *store.Tx) tracking.Tx { return tx })})
		t.Cleanup(tr.Close)
		err := tr.Apply(ctx, []tracking.Report{
			{Kind: tracking.Rejected, MessageID: rejected.ID, ErrorCode: domain.CodeRejected},
			{Kind: tracking.Accepted, MessageID: undelivered.ID, Provider: "p", Ref: "r1"},
			{Kind: tracking.Accepted, MessageID: keptBySibling.ID, Provider: "p", Ref: "r2"},
		})
		if err != nil {
			t.Fatal(err)
		}
		err = tr.Apply(ctx, []tracking.Report{
			{Kind: tracking.Progress, MessageID: undelivered.ID, Status: domain.Failed, ErrorCode: domain.CodeUndelivered},
			{Kind: tracking.Progress, MessageID: keptBySibling.ID, Status: domain.Failed, ErrorCode: domain.CodeUndelivered},
		})
		if err != nil {
			t.Fatal(err)
		}
		// The leaf's two messages came back at every level; the sibling's,
		// billed on submit, stays charged at every level.
		storetest.CheckBalance(t, st, leaf.ID, 10*ledger.Micro)
		storetest.CheckBalance(t, st, sibling.ID, 8*ledger.Micro)
		storetest.CheckBalance(t, st, mid.ID, 10*ledger.Micro-3*ledger.Micro/2)
		storetest.CheckBalance(t, st, top.ID, 9*ledger.Micro)
		storetest.CheckUsage(t, st, leaf.ID)
		storetest.CheckUsage(t, st, sibling.ID)
		for _, mid := range []string{rejected.ID, undelivered.ID} {
			m, err := st.MessageByID(ctx, mid)
			if err != nil {
				t.Fatal(err)
			}
			if m.Status != domain.Failed || m.Charged != 0 || len(m.Upline) != 2 || m.Upline[0].Charged != 0 || m.Upline[1].Charged != 0 {
				t.Fatalf("message %s: %s, charged %d, upline %+v: want FAILED and nothing held", mid, m.Status, m.Charged, m.Upline)
			}
		}
		// Margins count the leaf's failed message as not charged.
		rows, err := st.Margins(ctx, now, now, "account")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Key == leaf.ID && r.Price != 0 {
				t.Fatalf("margins of the leaf: %+v, want no price for a message billed on delivery that failed", r)
			}
		}
	})
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
