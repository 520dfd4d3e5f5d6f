package store_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// t0 is the fixed "now" of every test: the store never reads the wall clock
// for anything the tests assert.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// credit is one credit in micro-credits.
const credit int64 = 1_000_000

// at returns t0 plus d; it keeps the tables short.
func at(d time.Duration) time.Time { return t0.Add(d) }

// eachStore runs fn on every dialect with a fresh, migrated store.
func eachStore(t *testing.T, fn func(t *testing.T, ctx context.Context, st *store.Store)) {
	t.Helper()
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		fn(t, context.Background(), st)
	})
}

// eachAccount is eachStore with an account in the store, topped up with
// balance micro-credits: the start of most tests.
func eachAccount(t *testing.T, balance int64, fn func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account)) {
	t.Helper()
	eachStore(t, func(t *testing.T, ctx context.Context, st *store.Store) {
		fn(t, ctx, st, newAccount(t, st, balance))
	})
}

// eachTwoAccounts is eachAccount with a second account, both without
// credit: the start of every test of whose data a call reaches.
func eachTwoAccounts(t *testing.T, fn func(t *testing.T, ctx context.Context, st *store.Store, acc, other domain.Account)) {
	t.Helper()
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		fn(t, ctx, st, acc, newAccount(t, st, 0))
	})
}

// eachPostgresAccount is eachAccount on PostgreSQL alone (the SQLite run
// is skipped, saying why), with a second, raw connection to the database
// for transactions the store would not hold open itself.
func eachPostgresAccount(t *testing.T, whyNotSQLite string, fn func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account, raw *sql.DB)) {
	t.Helper()
	storetest.Each(t, func(t *testing.T, st *store.Store, dsn string) {
		if st.Dialect() != store.Postgres {
			t.Skip(whyNotSQLite)
		}
		ctx := context.Background()
		acc := newAccount(t, st, 0)
		raw, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		fn(t, ctx, st, acc, raw)
	})
}

// eachAtVersion runs fn on every dialect with a store migrated only up to
// version, for tests of the migrations after it: fn writes rows of the old
// schema with exec (which fails the test on error), then migrates.
func eachAtVersion(t *testing.T, version int64, fn func(t *testing.T, ctx context.Context, st *store.Store, dsn string, exec func(q string, args ...any))) {
	t.Helper()
	for _, d := range storetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			storetest.Need(t, d)
			ctx := context.Background()
			dsn := storetest.DSN(t, d)
			st, err := store.Open(ctx, dsn, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := st.MigrateTo(ctx, version); err != nil {
				t.Fatal(err)
			}
			fn(t, ctx, st, dsn, func(q string, args ...any) {
				t.Helper()
				if err := st.Exec(ctx, q, args...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			})
		})
	}
}

// newAccount creates an account and tops it up with balance micro-credits
// through AddCredits, so that its ledger explains the balance.
func newAccount(t *testing.T, st *store.Store, balance int64) domain.Account {
	t.Helper()
	ctx := context.Background()
	a := domain.Account{
		ID: id.New(id.Account, t0), Name: "Acme", Tier: "standard", Currency: "EUR", CountryCode: "ES",
		WebhookSecret: "whsec_first", Limits: domain.Limits{TierRPM: 600, SendRPM: 300, StatusRPM: 1200, MediaRPM: 60},
		WAQualityTier: 1, CreatedAt: t0,
	}
	if err := st.CreateAccount(ctx, a); err != nil {
		t.Fatalf("create account: %v", err)
	}
	if balance > 0 {
		addCredits(t, st, a.ID, balance, ledger.TopUp, "opening")
	}
	got, err := st.Account(ctx, a.ID)
	if err != nil {
		t.Fatalf("read account: %v", err)
	}
	return got
}

// addCredits records a top-up or correction in the ledger, as operators do.
func addCredits(t *testing.T, st *store.Store, accountID string, amount int64, kind ledger.Kind, note string) int64 {
	t.Helper()
	balance, err := creditAccount(context.Background(), st, accountID, amount, kind, note)
	if err != nil {
		t.Fatalf("credit: %v", err)
	}
	return balance
}

// creditAccount is ledger.Credit in a transaction of its own.
func creditAccount(ctx context.Context, st *store.Store, accountID string, amount int64, kind ledger.Kind, note string) (int64, error) {
	var balance int64
	err := st.Write(ctx, func(tx *store.Tx) error {
		var err error
		balance, err = ledger.Credit(ctx, tx, accountID, amount, kind, note, t0)
		return err
	})
	return balance, err
}

// newCampaign returns an unsaved campaign of n messages.
func newCampaign(acc domain.Account, env domain.Environment, created time.Time, n int) domain.Campaign {
	return domain.Campaign{
		ID: id.New(id.Campaign, created), AccountID: acc.ID, KeyID: "key_test", Env: env, Type: domain.SMS,
		CallbackURL: "https://hooks.example.com/cb", Total: n, CreatedAt: created,
	}
}

// newMessage returns an unsaved message of c that waits for dispatch from
// its creation time. Its id is made from created, so messages made at
// increasing times sort in that order.
func newMessage(c domain.Campaign, to string, charged int64, created time.Time) domain.Message {
	return domain.Message{
		ID: id.New(id.Message, created), CampaignID: c.ID, AccountID: c.AccountID, Env: c.Env, To: to,
		CountryCode: "ES", Type: domain.SMS, Channel: domain.SMS, Body: "hello", Status: domain.Sending, Segments: 1,
		Encoding: "GSM7", Credits: charged, Charged: charged, CallbackURL: c.CallbackURL,
		CreatedAt: created, UpdatedAt: created, ExpiresAt: created.Add(24 * time.Hour), NextAttemptAt: created,
	}
}

// insertMessages writes messages (and their campaign) without charging.
func insertMessages(t *testing.T, st *store.Store, c domain.Campaign, msgs ...domain.Message) {
	t.Helper()
	for i := range msgs {
		msgs[i].Charged = 0
	}
	write(t, st, func(ctx context.Context, tx *store.Tx) error {
		if err := tx.InsertCampaign(ctx, c); err != nil {
			return err
		}
		return tx.InsertMessages(ctx, msgs)
	})
}

// write runs fn in a write transaction and fails the test on error.
func write(t *testing.T, st *store.Store, fn func(ctx context.Context, tx *store.Tx) error) {
	t.Helper()
	ctx := context.Background()
	if err := st.Write(ctx, func(tx *store.Tx) error { return fn(ctx, tx) }); err != nil {
		t.Fatalf("write: %v", err)
	}
}

var checkBalance = storetest.CheckBalance

// wantErr compares an error with an expected sentinel (nil meaning none).
func wantErr(t *testing.T, what string, got, want error) {
	t.Helper()
	if want == nil && got != nil || want != nil && !errors.Is(got, want) {
		t.Fatalf("%s: error %v, want %v", what, got, want)
	}
}

// ids lists the ids of messages.
func ids(msgs []domain.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}
