package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/fraud"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// The fraud guard's counts on a real store: on SQLite the counts of
// recipients and ranges live in the process and are taken again from the
// messages, on PostgreSQL they are rows; both must hold a cap across a
// restart and keep accounts apart.

// guardedAccount makes an account whose own rules are rules.
func guardedAccount(t *testing.T, st *store.Store, rules domain.FraudRules) domain.Account {
	t.Helper()
	a := newAccount(t, st, 0)
	a.Fraud = domain.FraudSettings{Rules: &rules}
	return a
}

// guardSend sends one message to each number as the group commit does:
// the guard decides, its decisions are applied, and the messages are
// written in the same transaction. It returns how many were stopped.
func guardSend(t *testing.T, st *store.Store, g *fraud.Guard, acc domain.Account, now time.Time, to ...string) int {
	t.Helper()
	c := newCampaign(acc, domain.Live, now, len(to))
	msgs := make([]domain.Message, len(to))
	for i, n := range to {
		msgs[i] = newMessage(c, n, 0, now)
		msgs[i].CountryCode = "55"
	}
	stopped := 0
	write(t, st, func(ctx context.Context, tx *store.Tx) error {
		sends := []fraud.Send{{Account: acc, Messages: msgs}}
		ds, err := g.Check(ctx, tx, now, sends)
		if err != nil {
			return err
		}
		for _, d := range ds {
			fraud.Apply(&msgs[d.Message], d.FraudDecision, now)
			if d.Action != domain.FraudAlert {
				stopped++
			}
		}
		if err := tx.InsertCampaign(ctx, c); err != nil {
			return err
		}
		return tx.InsertMessages(ctx, msgs)
	})
	return stopped
}

func capRules(perRecipient, perRange int) domain.FraudRules {
	return domain.FraudRules{PerRecipientHourly: &perRecipient, PerRangeHourly: &perRange, Action: domain.FraudBlock}
}

// reopen closes st and opens the same database again, as a restarted
// node does (the caller closes the last one).
func reopen(t *testing.T, st *store.Store, dsn string) *store.Store {
	t.Helper()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := store.Open(context.Background(), dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return again
}

func TestFraudCapsHoldAcrossARestart(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.DSN(t, d)
			ctx := context.Background()
			st, err := store.Open(ctx, dsn, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { st.Close() }()
			if err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			acc := guardedAccount(t, st, capRules(3, 5))
			now := at(10 * time.Minute)
			g := fraud.New(fraud.Config{})
			// Two to one number and two more of its range go out; a
			// message blocked does not count.
			if n := guardSend(t, st, g, acc, now, "5511999990001", "5511999990001"); n != 0 {
				t.Fatalf("stopped %d of the first two", n)
			}
			if n := guardSend(t, st, g, acc, now, "5511999990002", "5511999990003"); n != 0 {
				t.Fatalf("stopped %d of the range's next two", n)
			}

			st = reopen(t, st, dsn)
			g = fraud.New(fraud.Config{})
			later := now.Add(20 * time.Minute)
			// The range holds 4 of its 5: one more goes, the next is over.
			if n := guardSend(t, st, g, acc, later, "5511999990001"); n != 0 {
				t.Fatalf("the number's third message was stopped after the restart")
			}
			if n := guardSend(t, st, g, acc, later, "5511999990004"); n != 1 {
				t.Fatalf("the range's sixth message went out after the restart (stopped %d)", n)
			}
			// The number has had 3, its cap: a fourth is stopped, even
			// after another restart, and the blocked ones never counted.
			st = reopen(t, st, dsn)
			g = fraud.New(fraud.Config{})
			if n := guardSend(t, st, g, acc, later.Add(time.Minute), "5511999990001"); n != 1 {
				t.Fatalf("the number's fourth message went out after the second restart")
			}
			// The next hour starts from nothing.
			if n := guardSend(t, st, g, acc, now.Add(time.Hour), "5511999990001", "5511999990005"); n != 0 {
				t.Fatalf("stopped %d in the next hour", n)
			}
		})
	}
}

func TestFraudCountsKeepAccountsApartAcrossARestart(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.DSN(t, d)
			ctx := context.Background()
			st, err := store.Open(ctx, dsn, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { st.Close() }()
			if err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			a := guardedAccount(t, st, capRules(2, 50))
			b := guardedAccount(t, st, capRules(2, 50))
			now := at(5 * time.Minute)
			g := fraud.New(fraud.Config{})
			if n := guardSend(t, st, g, a, now, "5511999990001", "5511999990001", "5511999990001"); n != 1 {
				t.Fatalf("a: stopped %d of 3 to one number, want 1", n)
			}
			if n := guardSend(t, st, g, b, now, "5511999990001", "5511999990001"); n != 0 {
				t.Fatalf("b was stopped by a's count (%d)", n)
			}
			st = reopen(t, st, dsn)
			g = fraud.New(fraud.Config{})
			if n := guardSend(t, st, g, b, now.Add(time.Minute), "5511999990001"); n != 1 {
				t.Fatalf("b's third message went out after the restart")
			}
			// The test environment counts apart from live.
			c := newCampaign(a, domain.Test, now, 1)
			m := newMessage(c, "5511999990001", 0, now)
			write(t, st, func(ctx context.Context, tx *store.Tx) error {
				ds, err := g.Check(ctx, tx, now, []fraud.Send{{Account: a, Messages: []domain.Message{m}}})
				if err != nil || len(ds) != 0 {
					t.Errorf("a's test message: %v, %v", ds, err)
				}
				return err
			})
		})
	}
}

// TestFraudCountsSeeAnotherWriter: a second process on the same SQLite
// file (here a second store) writes messages the first never counted;
// the first must see them, not its memory alone.
func TestFraudCountsSeeAnotherWriter(t *testing.T) {
	dsn := storetest.DSN(t, "sqlite")
	one := storetest.Open(t, dsn)
	two := storetest.Open(t, dsn)
	acc := guardedAccount(t, one, capRules(3, 50))
	now := at(15 * time.Minute)
	g1, g2 := fraud.New(fraud.Config{}), fraud.New(fraud.Config{})
	if n := guardSend(t, one, g1, acc, now, "5511999990001", "5511999990001"); n != 0 {
		t.Fatalf("stopped %d", n)
	}
	if n := guardSend(t, two, g2, acc, now, "5511999990001"); n != 0 {
		t.Fatalf("the other writer's message, the third, was stopped")
	}
	if n := guardSend(t, one, g1, acc, now, "5511999990001"); n != 1 {
		t.Fatalf("the fourth message went out: the first writer missed the other's")
	}
	if n := guardSend(t, two, g2, acc, now, "5511999990001"); n != 1 {
		t.Fatalf("the fifth message went out: the second writer missed the first's")
	}
}
