package store_test

import (
	"context"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
)

// Rows written in the same millisecond must list in the order they were
// written, whatever their ids: ids end in random bits, so a refund can get
// a lower id than the debit it follows (TestRCSFallback failed that way).
func TestListsFollowWriteOrder(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		// Ids chosen against the write order: each later row sorts first.
		lines := []ledger.Entry{
			{ID: "led_3", AccountID: acc.ID, Amount: 5, BalanceAfter: 5, Kind: ledger.TopUp, CreatedAt: t0},
			{ID: "led_2", AccountID: acc.ID, Amount: -2, BalanceAfter: 3, Kind: ledger.Debit, MessageID: "msg_x", CreatedAt: t0},
			{ID: "led_1", AccountID: acc.ID, Amount: 2, BalanceAfter: 5, Kind: ledger.Refund, MessageID: "msg_x", CreatedAt: t0},
		}
		for _, l := range lines {
			write(t, st, func(ctx context.Context, tx *store.Tx) error { return tx.InsertLedger(ctx, []ledger.Entry{l}) })
		}
		got, err := st.Ledger(ctx, acc.ID, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"led_1", "led_2", "led_3"} // newest first
		for i, e := range got {
			if i >= len(want) || e.ID != want[i] {
				t.Fatalf("ledger order %v, want %v", ledgerIDs(got), want)
			}
		}
		page, err := st.Ledger(ctx, acc.ID, "led_1", 10)
		if err != nil || len(page) != 2 || page[0].ID != "led_2" {
			t.Fatalf("page after led_1: %v (%v)", ledgerIDs(page), err)
		}

		// A phone's latest message is the one written last.
		c := newCampaign(acc, domain.Live, t0, 2)
		first := newMessage(c, "34600000009", 0, t0)
		second := newMessage(c, "34600000009", 0, t0)
		first.ID, second.ID = "msg_9", "msg_1"
		insertMessages(t, st, c, first)
		write(t, st, func(ctx context.Context, tx *store.Tx) error { return tx.InsertMessages(ctx, []domain.Message{second}) })
		latest, err := st.LatestMessageTo(ctx, acc.ID, domain.Live, "34600000009", t0)
		if err != nil || latest.ID != "msg_1" {
			t.Fatalf("latest message %q (%v), want msg_1", latest.ID, err)
		}

		// A message's events list oldest first.
		evs := []domain.Event{
			{ID: "evt_9", AccountID: acc.ID, MessageID: "msg_1", Event: "delivery_status", URL: "https://x", Body: "{}", NextAttemptAt: t0, CreatedAt: t0},
			{ID: "evt_1", AccountID: acc.ID, MessageID: "msg_1", Event: "delivery_status", URL: "https://x", Body: "{}", NextAttemptAt: t0, CreatedAt: t0},
		}
		write(t, st, func(ctx context.Context, tx *store.Tx) error { return tx.InsertEvents(ctx, evs) })
		listed, err := st.EventsForMessage(ctx, acc.ID, "msg_1")
		if err != nil || len(listed) != 2 || listed[0].ID != "evt_9" {
			t.Fatalf("events %+v (%v), want evt_9 first", listed, err)
		}
	})
}

func ledgerIDs(es []ledger.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}
