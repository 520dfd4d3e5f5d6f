package store_test

import (
	"context"
	"strconv"
	"sync"
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

// openOwn opens and migrates a store that the test closes itself: it
// closes and opens it again (reopen), as a restarted node does, which
// storetest.Open's closing at cleanup would close twice.
func openOwn(t *testing.T, dsn string, o store.Options) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		t.Fatal(err)
	}
	return st
}

// reopen closes st and opens the same database again, as a restarted
// node does (the caller closes the last one).
func reopen(t *testing.T, st *store.Store, dsn string, o store.Options) *store.Store {
	t.Helper()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := store.Open(context.Background(), dsn, o)
	if err != nil {
		t.Fatal(err)
	}
	return again
}

func TestFraudCapsHoldAcrossARestart(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.Migrated(t, d)
			st := openOwn(t, dsn, store.Options{})
			defer func() { st.Close() }()
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

			st = reopen(t, st, dsn, store.Options{})
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
			st = reopen(t, st, dsn, store.Options{})
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
			dsn := storetest.Migrated(t, d)
			st := openOwn(t, dsn, store.Options{})
			defer func() { st.Close() }()
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
			st = reopen(t, st, dsn, store.Options{})
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

// testClock is a clock the test moves, shared by stores on one file.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestFraudCountsSeeAnotherWriter: a second process on the same SQLite
// file (here a second store) writes messages the first never counted;
// the first must see them, not its memory alone, once it looks again
// (at most every 100 ms of its clock).
func TestFraudCountsSeeAnotherWriter(t *testing.T) {
	dsn := storetest.Migrated(t, "sqlite")
	clock := &testClock{t: time.Now()}
	one := storetest.OpenWith(t, dsn, store.Options{Now: clock.Now})
	two := storetest.OpenWith(t, dsn, store.Options{Now: clock.Now})
	acc := guardedAccount(t, one, capRules(3, 50))
	now := at(15 * time.Minute)
	g1, g2 := fraud.New(fraud.Config{}), fraud.New(fraud.Config{})
	if n := guardSend(t, one, g1, acc, now, "5511999990001", "5511999990001"); n != 0 {
		t.Fatalf("stopped %d", n)
	}
	clock.Add(100 * time.Millisecond)
	if n := guardSend(t, two, g2, acc, now, "5511999990001"); n != 0 {
		t.Fatalf("the other writer's message, the third, was stopped")
	}
	clock.Add(100 * time.Millisecond)
	if n := guardSend(t, one, g1, acc, now, "5511999990001"); n != 1 {
		t.Fatalf("the fourth message went out: the first writer missed the other's")
	}
	clock.Add(100 * time.Millisecond)
	if n := guardSend(t, two, g2, acc, now, "5511999990001"); n != 1 {
		t.Fatalf("the fifth message went out: the second writer missed the first's")
	}
}

// TestFraudCountryCountsPendingBetweenWrites: a country's counts are
// written as rows at most once a second; meanwhile they are pending, and
// the burst rule's reads (its count and its baseline) see them, a close
// writes them, and the next process goes on from them.
func TestFraudCountryCountsPendingBetweenWrites(t *testing.T) {
	dsn := storetest.Migrated(t, "sqlite")
	ctx := context.Background()
	clock := &testClock{t: time.Now()}
	st := openOwn(t, dsn, store.Options{Now: clock.Now})
	defer func() { st.Close() }()
	acc := guardedAccount(t, st, capRules(1000, 1000))
	hour := at(0).Unix() / 3600
	country := func(h int64) domain.FraudCount {
		return domain.FraudCount{AccountID: acc.ID, Env: domain.Live, Scope: domain.ScopeCountry, Key: "55", Hour: h}
	}
	add := func(st *store.Store, n int64) int64 {
		t.Helper()
		var got []int64
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			c := country(hour)
			c.N = n
			var err error
			got, err = tx.AddFraudCounts(ctx, []domain.FraudCount{c})
			return err
		})
		return got[0]
	}
	// rows reads the country's rows as stored, without the pending.
	rows := func(h int64) int64 {
		t.Helper()
		got, err := st.QueryStrings(ctx, `SELECT CAST(coalesce(sum(n), 0) AS TEXT) FROM fraud_counts
			WHERE account_id = ? AND scope = ? AND fkey = ? AND hour = ?`, acc.ID, domain.ScopeCountry, "55", h)
		if err != nil || len(got) != 1 {
			t.Fatal(got, err)
		}
		n, err := strconv.ParseInt(got[0], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// A second after the last write (the account's), a write writes its
	// counts as rows.
	clock.Add(time.Second)
	if got := add(st, 2); got != 2 {
		t.Fatalf("count %d, want 2", got)
	}
	if got := rows(hour); got != 2 {
		t.Fatalf("rows hold %d after a write a second after the last, want 2", got)
	}
	// Within the second the counts stay pending, and are counted.
	clock.Add(300 * time.Millisecond)
	if got := add(st, 3); got != 5 {
		t.Fatalf("count %d, want 5", got)
	}
	if got := rows(hour); got != 2 {
		t.Fatalf("rows hold %d within the second, want 2 (the rest pending)", got)
	}
	var trailing []int64
	write(t, st, func(ctx context.Context, tx *store.Tx) error {
		var err error
		trailing, err = tx.TrailingFraudCounts(ctx, []domain.FraudCount{country(hour + 1)}, 24)
		return err
	})
	if trailing[0] != 5 {
		t.Fatalf("the next hour's baseline reads %d, want 5 with the pending", trailing[0])
	}
	// A second later the next transaction writes them all.
	clock.Add(time.Second)
	if got := add(st, 1); got != 6 {
		t.Fatalf("count %d, want 6", got)
	}
	if got := rows(hour); got != 6 {
		t.Fatalf("rows hold %d after a second, want 6", got)
	}
	// Pending at a close are written by it, and the next process reads them.
	clock.Add(100 * time.Millisecond)
	add(st, 4)
	st = reopen(t, st, dsn, store.Options{Now: clock.Now})
	if got := rows(hour); got != 10 {
		t.Fatalf("rows hold %d after the close, want 10", got)
	}
	write(t, st, func(ctx context.Context, tx *store.Tx) error {
		var err error
		trailing, err = tx.TrailingFraudCounts(ctx, []domain.FraudCount{country(hour + 1)}, 24)
		return err
	})
	if trailing[0] != 10 {
		t.Fatalf("after the restart the next hour's baseline reads %d, want 10", trailing[0])
	}
}

// TestFraudHourMarksPendingBetweenWrites: on SQLite a decision on an
// hour row this process knows exists is added in memory and written with
// the countries' rows; the row's first decision alone is new (its alert),
// also after a restart, and the chart's reads count the pending ones.
func TestFraudHourMarksPendingBetweenWrites(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.Migrated(t, d)
			ctx := context.Background()
			clock := &testClock{t: time.Now()}
			st := openOwn(t, dsn, store.Options{Now: clock.Now})
			defer func() { st.Close() }()
			a := storetest.NewAccount(t, st, time.Now())
			b := storetest.NewAccount(t, st, time.Now())
			hour := at(0).Truncate(time.Hour)
			mark := func(st *store.Store, acct string, n int64) bool {
				t.Helper()
				var fresh []bool
				write(t, st, func(ctx context.Context, tx *store.Tx) error {
					var err error
					fresh, err = tx.MarkFraudHours(ctx, []domain.FraudHour{{Hour: hour, AccountID: acct, Rule: domain.RulePerRange,
						Scope: domain.ScopeRange, Key: "5511999990", Action: domain.FraudBlock, Messages: n}})
					return err
				})
				return fresh[0]
			}
			messages := func(st *store.Store) map[string]int64 {
				t.Helper()
				hs, err := st.FraudHours(ctx, domain.FraudQuery{From: hour, To: hour.Add(time.Hour)})
				if err != nil {
					t.Fatal(err)
				}
				out := map[string]int64{}
				for _, h := range hs {
					out[h.AccountID] += h.Messages
				}
				return out
			}
			clock.Add(time.Second)
			if !mark(st, a, 2) {
				t.Fatal("the row's first decisions were not new")
			}
			clock.Add(100 * time.Millisecond)
			if mark(st, a, 3) {
				t.Fatal("the row's later decisions were new again")
			}
			if !mark(st, b, 1) {
				t.Fatal("another account's row was taken for the first's")
			}
			if got := messages(st); got[a] != 5 || got[b] != 1 {
				t.Fatalf("the chart reads %v, want 5 and 1", got)
			}
			clock.Add(time.Second)
			if mark(st, a, 1) {
				t.Fatal("the row's later decisions were new again")
			}
			st = reopen(t, st, dsn, store.Options{Now: clock.Now})
			if got := messages(st); got[a] != 6 || got[b] != 1 {
				t.Fatalf("after a restart the chart reads %v, want 6 and 1", got)
			}
			if mark(st, a, 1) || mark(st, b, 1) {
				t.Fatal("after a restart a row was new again")
			}
			if got := messages(st); got[a] != 7 || got[b] != 2 {
				t.Fatalf("the chart reads %v, want 7 and 2", got)
			}
		})
	}
}

// TestFraudCountsOfALargeGroupJoinTheMemory: a transaction meeting more
// counts than it finds by a scan indexes them, and what it staged joins
// the hour's memory as a small transaction's does: the caps hold in the
// next groups, large or of one message, new numbers and old.
func TestFraudCountsOfALargeGroupJoinTheMemory(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			st := openOwn(t, storetest.Migrated(t, d), store.Options{})
			defer func() { st.Close() }()
			acc := guardedAccount(t, st, capRules(2, 100))
			now := at(10 * time.Minute)
			g := fraud.New(fraud.Config{})
			var numbers []string
			for i := range 30 {
				numbers = append(numbers, "55119"+strconv.Itoa(10000+i)+"001") // a range each
			}
			twice := append(append([]string{}, numbers...), numbers...)
			if n := guardSend(t, st, g, acc, now, twice...); n != 0 {
				t.Fatalf("stopped %d of each number's first two", n)
			}
			if n := guardSend(t, st, g, acc, now.Add(time.Minute), numbers[7]); n != 1 {
				t.Fatalf("a number's third message, alone in its group, went out")
			}
			if n := guardSend(t, st, g, acc, now.Add(2*time.Minute), "5511987650001"); n != 0 {
				t.Fatalf("a new number's first message was stopped")
			}
			if n := guardSend(t, st, g, acc, now.Add(3*time.Minute), "5511987650001", "5511987650001"); n != 1 {
				t.Fatalf("the new number's second and third: stopped %d, want the third", n)
			}
			if n := guardSend(t, st, g, acc, now.Add(4*time.Minute), numbers...); n != len(numbers) {
				t.Fatalf("stopped %d of the numbers' third messages, want all %d", n, len(numbers))
			}
		})
	}
}
