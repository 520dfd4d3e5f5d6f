package store_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
)

// TestAuthVersion checks that the counter behind the key cache moves with
// every change a key lookup can see, and stands still for the balance and
// a key's last use, which change on every request.
func TestAuthVersion(t *testing.T) {
	eachAccount(t, 10*credit, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		key := domain.APIKey{ID: id.New(id.Key, t0), AccountID: acc.ID, Env: "live", Prefix: "sk_live_ab", Hash: "h-av", CreatedAt: t0}
		if err := st.CreateKey(ctx, key); err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			name  string
			moves bool
			op    func() error
		}{
			{"a send's debit", false, func() error {
				return st.Write(ctx, func(tx *store.Tx) error {
					_, err := tx.AddBalance(ctx, acc.ID, -credit, at(1e9))
					return err
				})
			}},
			{"a top-up", false, func() error {
				_, err := creditAccount(ctx, st, acc.ID, credit, ledger.TopUp, "more")
				return err
			}},
			{"a key's last use", false, func() error { return st.TouchKey(ctx, key.ID, at(2e9)) }},
			{"limits", true, func() error { return st.SetLimits(ctx, acc.ID, domain.Limits{TierRPM: 1}) }},
			{"allow-list", true, func() error {
				return st.UpdateAccountSettings(ctx, acc.ID, []string{"192.0.2.1"}, false, 1)
			}},
			{"secret rotation", true, func() error { return st.RotateSecret(ctx, acc.ID, "whsec_next", at(3e9)) }},
			{"prices", true, func() error { return st.SetPrices(ctx, acc.ID, `{"SMS":{"55":2}}`) }},
			{"a sender", true, func() error {
				return st.AddSender(ctx, domain.Sender{ID: id.New(id.Sender, t0), AccountID: acc.ID, Channel: domain.SMS,
					Value: "Acme", CreatedAt: t0})
			}},
			{"revocation", true, func() error { return st.RevokeKey(ctx, acc.ID, key.ID, at(4e9)) }},
		}
		for _, s := range steps {
			before, err := st.AuthVersion(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.op(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			after, err := st.AuthVersion(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if moved := after != before; moved != s.moves {
				t.Errorf("%s: version %d → %d, want moved=%v", s.name, before, after, s.moves)
			}
			// A lookup reports the version its answer is as of.
			_, _, v, err := st.KeyByHashVersion(ctx, key.Hash)
			if err != nil || v != after {
				t.Errorf("%s: KeyByHashVersion version %d (%v), want %d", s.name, v, err, after)
			}
		}
	})
}

// The writer's reads of the auth counter are offered to the watchers once
// their transaction committed with every write of its group succeeded:
// never before the commit (a watcher would read the old settings under the
// new counter), and never from a group that undid a write (its read may
// have seen a change that was undone).
func TestWatchAuthVersion(t *testing.T) {
	eachAccount(t, 10*credit, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		type offer struct {
			v, committed int64
			began        time.Time
		}
		var mu sync.Mutex
		var offers []offer
		st.WatchAuthVersion(func(v int64, began time.Time) {
			committed, err := st.AuthVersion(ctx) // outside the transaction: what others see
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			offers = append(offers, offer{v, committed, began})
			mu.Unlock()
		})
		got := func() []offer {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(offers)
		}
		asked := time.Now()
		var read int64
		if err := st.Write(ctx, func(tx *store.Tx) error {
			// A change of the account's settings moves the counter.
			if err := tx.Exec(ctx, `UPDATE accounts SET name = $1 WHERE id = $2`, "renamed", acc.ID); err != nil {
				return err
			}
			var err error
			read, err = tx.AuthVersion(ctx)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if o := got(); len(o) != 1 || o[0].v != read || o[0].committed != read || !o[0].began.After(asked) {
			t.Fatalf("offers %+v, want one of %d, committed when offered, begun after %v", o, read, asked)
		}

		refused := errors.New("refused")
		_, err := st.WriteGroup(ctx, []func(tx *store.Tx) error{
			func(tx *store.Tx) error {
				_, err := tx.AuthVersion(ctx)
				return err
			},
			func(tx *store.Tx) error { return refused },
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Write(ctx, func(tx *store.Tx) error {
			if err := tx.Exec(ctx, `UPDATE accounts SET name = $1 WHERE id = $2`, "undone", acc.ID); err != nil {
				return err
			}
			if _, err := tx.AuthVersion(ctx); err != nil {
				return err
			}
			return refused
		}); !errors.Is(err, refused) {
			t.Fatalf("write: %v, want it refused", err)
		}
		if o := got(); len(o) != 1 {
			t.Fatalf("offers %+v after groups that undid a write, want none more", o[1:])
		}
	})
}

// TestWantAuthVersion: once a watcher asks (AskAuthVersion), SQLite's
// writer reads the auth counter at the start of its next transaction,
// whatever that transaction is for, and offers the read at once, before
// the transaction's own writes run: once per asking, and never unasked.
// PostgreSQL's writer cannot be asked, since a read would cost its
// pipelined group a round trip.
func TestWantAuthVersion(t *testing.T) {
	eachAccount(t, 10*credit, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		type offer struct {
			v     int64
			began time.Time
		}
		var mu sync.Mutex
		var offers []offer
		st.WatchAuthVersion(func(v int64, began time.Time) {
			mu.Lock()
			offers = append(offers, offer{v, began})
			mu.Unlock()
		})
		got := func() []offer {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(offers)
		}
		rename := func(name string) {
			t.Helper()
			if err := st.Write(ctx, func(tx *store.Tx) error {
				return tx.Exec(ctx, `UPDATE accounts SET name = $1 WHERE id = $2`, name, acc.ID)
			}); err != nil {
				t.Fatal(err)
			}
		}
		rename("unasked")
		if o := got(); len(o) != 0 {
			t.Fatalf("offers %+v from a write that neither read the counter nor was asked to", o)
		}
		before, err := st.AuthVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ask := st.AskAuthVersion()
		if st.Dialect() == store.Postgres {
			if ask != nil {
				t.Fatal("PostgreSQL's writer can be asked to read the counter")
			}
			return
		}
		asked := time.Now()
		ask()
		var during []offer
		if err := st.Write(ctx, func(tx *store.Tx) error {
			during = got() // what was offered before this write ran
			// Moves the counter, after the read at the start.
			return tx.Exec(ctx, `UPDATE accounts SET name = $1 WHERE id = $2`, "asked", acc.ID)
		}); err != nil {
			t.Fatal(err)
		}
		if len(during) != 1 {
			t.Fatalf("offers %+v while the transaction ran, want the read at its start offered already", during)
		}
		o := got()
		if len(o) != 1 || o[0].v != before || !o[0].began.After(asked) {
			t.Fatalf("offers %+v, want one of %d, the counter when the transaction began, read after %v", o, before, asked)
		}
		rename("again")
		if o := got(); len(o) != 1 {
			t.Fatalf("offers %+v after a second write, want no more: the asking is taken once", o[1:])
		}
	})
}
