package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// KnownParkedRefs finds the parked reports whose id a message or a part
// now carries, and only those.
func TestKnownParkedRefs(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		c := newCampaign(acc, domain.Live, t0, 2)
		m1, m2 := newMessage(c, "34600000001", 0, at(0)), newMessage(c, "34600000002", 0, at(1))
		m1.Provider, m1.ProviderRef = "smsc", "r1"
		insertMessages(t, st, c, m1, m2)
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			if err := tx.InsertParts(ctx, []domain.Part{{Provider: "smsc", Ref: "p2", MessageID: m2.ID, Part: 2, Parts: 2}}); err != nil {
				return err
			}
			var park []domain.PendingReport
			for _, ref := range []string{"r1", "p2", "unknown"} {
				park = append(park, domain.PendingReport{Provider: "smsc", Ref: ref, Status: domain.Delivered, ReportedAt: t0, ReceivedAt: t0})
			}
			// The same id of another provider is not known.
			park = append(park, domain.PendingReport{Provider: "other", Ref: "r1", Status: domain.Delivered, ReportedAt: t0, ReceivedAt: t0})
			return tx.ParkReports(ctx, park)
		})
		got, err := st.KnownParkedRefs(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got["smsc"])
		if len(got) != 1 || !slices.Equal(got["smsc"], []string{"p2", "r1"}) {
			t.Fatalf("known parked refs %v, want smsc: p2, r1", got)
		}
	})
}

// TakePendingReports removes what it returns and returns it oldest first.
func TestTakePendingReports(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		park := []domain.PendingReport{
			{Provider: "smsc", Ref: "r1", Status: domain.Delivered, ReportedAt: at(2 * time.Second), ReceivedAt: at(2 * time.Second)},
			{Provider: "smsc", Ref: "r1", Status: domain.Sent, ReportedAt: at(time.Second), ReceivedAt: at(3 * time.Second)},
			{Provider: "smsc", Ref: "r2", Status: domain.Delivered, ReportedAt: at(0), ReceivedAt: at(0)},
		}
		write(t, st, func(ctx context.Context, tx *store.Tx) error { return tx.ParkReports(ctx, park) })
		var got []domain.PendingReport
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			var err error
			got, err = tx.TakePendingReports(ctx, "smsc", []string{"r1"})
			return err
		})
		if len(got) != 2 || got[0].Status != domain.Sent || got[1].Status != domain.Delivered {
			t.Fatalf("took %+v, want r1's SENT then DELIVERED", got)
		}
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			var err error
			got, err = tx.TakePendingReports(ctx, "smsc", []string{"r1", "r2"})
			return err
		})
		if len(got) != 1 || got[0].Ref != "r2" {
			t.Fatalf("second take %+v, want only r2", got)
		}
	})
}

// A SQLite writer that knows pending_reports empty takes reports without
// looking, yet leaves none behind: what it parks itself is taken at once,
// and what another process parks on the same file is found by
// KnownParkedRefs (the sweeper's Unpark, every second) and taken then.
func TestParkedReportsKnownEmpty(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.Migrated(t, "sqlite")
	clock := &testClock{t: time.Now()}
	one := storetest.OpenWith(t, dsn, store.Options{Now: clock.Now})
	two := storetest.OpenWith(t, dsn, store.Options{Now: clock.Now})
	acc := newAccount(t, one, 0)
	c := newCampaign(acc, domain.Live, t0, 1)
	m := newMessage(c, "34600000001", 0, at(0))
	m.Provider, m.ProviderRef = "smsc", "r2"
	insertMessages(t, one, c, m)
	park := func(st *store.Store, ref string) {
		t.Helper()
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			return tx.ParkReports(ctx, []domain.PendingReport{{Provider: "smsc", Ref: ref, Status: domain.Delivered,
				ReportedAt: t0, ReceivedAt: t0}})
		})
	}
	take := func(st *store.Store, ref string) int {
		t.Helper()
		var got []domain.PendingReport
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			var err error
			got, err = tx.TakePendingReports(ctx, "smsc", []string{ref})
			return err
		})
		return len(got)
	}
	if n := take(one, "r0"); n != 0 { // the first take looks, and finds the table empty
		t.Fatalf("took %d from an empty table", n)
	}
	park(one, "r1")
	if n := take(one, "r1"); n != 1 {
		t.Fatalf("took %d of its own parked report, want it", n)
	}
	clock.Add(store.ParkedCheckEvery)
	if n := take(one, "r0"); n != 0 { // empty again, as the next look finds
		t.Fatalf("took %d from an empty table", n)
	}
	park(two, "r2")
	if n := take(one, "r2"); n != 0 {
		t.Fatalf("took %d: the writer that knew the table empty looked again at once", n)
	}
	if refs, err := one.KnownParkedRefs(ctx, 10); err != nil || !slices.Equal(refs["smsc"], []string{"r2"}) {
		t.Fatalf("known parked refs %v (%v), want the other writer's r2", refs, err)
	}
	if n := take(one, "r2"); n != 1 {
		t.Fatalf("took %d of the other writer's report once the sweeper saw it, want it", n)
	}
}
