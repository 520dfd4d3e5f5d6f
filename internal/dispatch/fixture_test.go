package dispatch

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/api/notify"
	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/tracking"
)

// newTracker is a tracker over st that writes the REST front's webhook
// events, as a node's does; hold, when not 0, bounds the wait of a receipt
// for its announced hand-over.
func newTracker(st *store.Store, now func() time.Time, hold time.Duration) *tracking.Tracker {
	w := tracking.Bind(st, func(tx *store.Tx) tracking.Tx { return tx },
		tracking.Notify(func(tx *store.Tx) notify.EventTx { return tx }, &notify.Webhooks[notify.EventTx]{}))
	return tracking.NewTracker(tracking.Config{Store: st, Writer: w, Now: now, ExpectHold: hold})
}

// useTracker gives the fixture's dispatcher a new tracker whose receipts
// wait at most hold for their announced hand-over.
func (f *fixture) useTracker(t *testing.T, hold time.Duration) {
	t.Helper()
	f.tracker = newTracker(f.st, f.clock, hold)
	t.Cleanup(f.tracker.Close)
	f.disp.tracker = f.tracker
}

// creditAccount adds amount to an account's balance with a ledger line of
// kind.
func creditAccount(ctx context.Context, st *store.Store, accountID string, amount int64, kind ledger.Kind, note string) (int64, error) {
	return bootstrap.AddCredits(ctx, st, accountID, amount, kind, note, time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC))
}

// quietLog is the log of the parts a test builds: what they log is not
// what it tests.
func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }
