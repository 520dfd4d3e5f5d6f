package message

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/api/notify"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake/intaketest"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
	"github.com/msgsvc/msgsvc/internal/tracking"
)

// fakeRoutes picks a provider by channel.
type fakeRoutes map[domain.Channel]string

func (r fakeRoutes) PickName(_ domain.Environment, channel domain.Channel, _ string) string {
	return r[channel]
}

// fixture is a send service over a fresh SQLite store, with an account of
// 100 credits and its live key.
type fixture struct {
	st     *store.Store
	svc    services
	caller Caller
	now    *atomic.Int64 // Unix ms of the fixed clock
}

func (f *fixture) clock() time.Time { return time.UnixMilli(f.now.Load()).UTC() }

func newFixture(t *testing.T, routes fakeRoutes) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{now: &atomic.Int64{}, st: storetest.Open(t, storetest.Migrated(t, "sqlite"))}
	f.now.Store(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC).UnixMilli())
	acc := domain.Account{ID: "acc_1", Name: "A", Tier: "pro", Currency: "USD", CountryCode: "55", WebhookSecret: "whsec_x",
		WAQualityTier: 1, CreatedAt: f.clock()}
	if err := f.st.CreateAccount(ctx, acc); err != nil {
		t.Fatal(err)
	}
	if _, err := creditAccount(ctx, f.st, acc.ID, 100*ledger.Micro, ledger.TopUp, ""); err != nil {
		t.Fatal(err)
	}
	acc, _ = f.st.Account(ctx, acc.ID)
	f.caller = Caller{Account: acc, Key: domain.APIKey{ID: "key_1", AccountID: acc.ID, Env: "live"}}
	tracker := newTracker(f.st, f.clock)
	t.Cleanup(tracker.Close)
	f.svc = newServices(sendConfig{Config: intaketest.Config{Store: f.st, Picker: routes, Now: f.clock, AllowPrivateCallbacks: true}, Changes: tracker})
	t.Cleanup(f.svc.Close)
	return f
}

// newTracker is a tracker over st that writes the REST front's webhook
// events, as a node's does.
func newTracker(st *store.Store, now func() time.Time) *tracking.Tracker {
	w := tracking.Bind(st, func(tx *store.Tx) tracking.Tx { return tx },
		tracking.Notify(func(tx *store.Tx) notify.EventTx { return tx }, &notify.Webhooks[notify.EventTx]{}))
	return tracking.NewTracker(tracking.Config{Store: st, Writer: w, Now: now})
}

// send accepts a send and returns its message id.
func (f *fixture) send(t *testing.T, d Draft) string {
	t.Helper()
	out, err := f.svc.Send(context.Background(), f.caller, d, SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out.Receipt.Messages[0].Message.ID
}
