package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/store"
)

// tree makes accounts under parents: names maps a short name to its
// parent's short name ("" at the top).
func tree(t *testing.T, st *store.Store, names [][2]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i, n := range names {
		created := at(time.Duration(i+1) * time.Millisecond)
		a := domain.Account{ID: id.New(id.Account, created), Name: n[0], Tier: "free", Currency: "USD",
			CountryCode: "US", WebhookSecret: "s", CreatedAt: created, ParentID: out[n[1]], Reseller: true}
		if err := st.CreateAccount(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		out[n[0]] = a.ID
	}
	return out
}

// suspensions reads who suspended each account ("" for none), by short
// name, checking that the time is set exactly when the name is.
func suspensions(t *testing.T, st *store.Store, ids map[string]string) map[string]string {
	t.Helper()
	short := map[string]string{}
	for n, id := range ids {
		short[id] = n
	}
	out := map[string]string{}
	for n, id := range ids {
		a, err := st.Account(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if a.Suspended() != (a.SuspendedBy != "") {
			t.Fatalf("%s: suspended at %v by %q", n, a.SuspendedAt, a.SuspendedBy)
		}
		out[n] = short[a.SuspendedBy]
	}
	return out
}

func TestSuspendSubtree(t *testing.T) {
	eachStore(t, func(t *testing.T, ctx context.Context, st *store.Store) {
		// r has children c1 and c2; c1 has g1; o is another tree.
		ids := tree(t, st, [][2]string{{"r", ""}, {"c1", "r"}, {"c2", "r"}, {"g1", "c1"}, {"o", ""}, {"oc", "o"}})
		none := map[string]string{"r": "", "c1": "", "c2": "", "g1": "", "o": "", "oc": ""}
		with := func(changes map[string]string) map[string]string {
			out := map[string]string{}
			for k, v := range none {
				out[k] = v
			}
			for k, v := range changes {
				out[k] = v
			}
			return out
		}
		steps := []struct {
			name    string
			op      func() error
			want    map[string]string
			counter bool // the auth counter must move
		}{
			{"a child's subtree, not its sibling, parent or another tree",
				func() error { return st.SuspendSubtree(ctx, ids["c1"], at(time.Hour)) },
				with(map[string]string{"c1": "c1", "g1": "c1"}), true},
			{"the root: the child's own suspension stays its own",
				func() error { return st.SuspendSubtree(ctx, ids["r"], at(2*time.Hour)) },
				with(map[string]string{"r": "r", "c1": "c1", "c2": "r", "g1": "c1"}), true},
			{"resuming the child falls back to the root's suspension",
				func() error { return st.ResumeSubtree(ctx, ids["c1"]) },
				with(map[string]string{"r": "r", "c1": "r", "c2": "r", "g1": "r"}), true},
			{"suspending the child again takes its subtree over from the root",
				func() error { return st.SuspendSubtree(ctx, ids["c1"], at(3*time.Hour)) },
				with(map[string]string{"r": "r", "c1": "c1", "c2": "r", "g1": "c1"}), true},
			{"resuming the root leaves the child's suspension",
				func() error { return st.ResumeSubtree(ctx, ids["r"]) },
				with(map[string]string{"c1": "c1", "g1": "c1"}), true},
			{"a grandchild's own suspension outlives its parent's",
				func() error {
					if err := st.ResumeSubtree(ctx, ids["c1"]); err != nil {
						return err
					}
					if err := st.SuspendSubtree(ctx, ids["g1"], at(4*time.Hour)); err != nil {
						return err
					}
					if err := st.SuspendSubtree(ctx, ids["c1"], at(5*time.Hour)); err != nil {
						return err
					}
					return st.ResumeSubtree(ctx, ids["c1"])
				},
				with(map[string]string{"g1": "g1"}), true},
			{"resuming an account nobody suspended changes nothing",
				func() error { return st.ResumeSubtree(ctx, ids["o"]) },
				with(map[string]string{"g1": "g1"}), false},
		}
		for _, s := range steps {
			before, err := st.AuthVersion(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.op(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if got := suspensions(t, st, ids); !reflect.DeepEqual(got, s.want) {
				t.Fatalf("%s: suspended by\n got %v\nwant %v", s.name, got, s.want)
			}
			after, err := st.AuthVersion(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if moved := after != before; moved != s.counter {
				t.Errorf("%s: auth counter moved %v, want %v", s.name, moved, s.counter)
			}
		}

		// The time of a suspension is when it began, kept when taken over.
		if err := st.SuspendSubtree(ctx, ids["r"], at(6*time.Hour)); err != nil {
			t.Fatal(err)
		}
		g1, err := st.Account(ctx, ids["g1"])
		if err != nil {
			t.Fatal(err)
		}
		if !g1.SuspendedAt.Equal(at(4 * time.Hour)) {
			t.Errorf("g1 suspended at %v, want %v", g1.SuspendedAt, at(4*time.Hour))
		}
		c2, err := st.Account(ctx, ids["c2"])
		if err != nil {
			t.Fatal(err)
		}
		if !c2.SuspendedAt.Equal(at(6 * time.Hour)) {
			t.Errorf("c2 suspended at %v, want %v", c2.SuspendedAt, at(6*time.Hour))
		}

		wantErr(t, "suspend unknown", st.SuspendSubtree(ctx, "acc_missing", t0), domain.ErrNotFound)
		wantErr(t, "resume unknown", st.ResumeSubtree(ctx, "acc_missing"), domain.ErrNotFound)
	})
}

// TestClaimHoldsSuspended: the dispatch claim leaves a suspended account's
// messages due but unclaimed (another account's go on), lets through the
// ones whose validity ended (to be expired), and claims the rest once the
// account is resumed.
func TestClaimHoldsSuspended(t *testing.T) {
	eachTwoAccounts(t, func(t *testing.T, ctx context.Context, st *store.Store, acc, other domain.Account) {
		c := newCampaign(acc, "live", at(-time.Hour), 3)
		held := newMessage(c, "34610000001", 0, at(-time.Hour))
		scheduled := newMessage(c, "34610000002", 0, at(-time.Hour+time.Millisecond))
		scheduled.ScheduledAt, scheduled.NextAttemptAt = at(time.Hour), at(time.Hour)
		stale := newMessage(c, "34610000003", 0, at(-time.Hour+2*time.Millisecond))
		stale.ExpiresAt = at(-time.Minute)
		insertMessages(t, st, c, held, scheduled, stale)
		oc := newCampaign(other, "live", at(-time.Hour), 1)
		theirs := newMessage(oc, "34610000004", 0, at(-time.Hour+3*time.Millisecond))
		insertMessages(t, st, oc, theirs)

		if err := st.SuspendSubtree(ctx, acc.ID, t0); err != nil {
			t.Fatal(err)
		}
		const lease = 30 * time.Second
		got, err := st.ClaimDue(ctx, "a", t0, lease, 100)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := sortedIDs(got), sortedIDs([]domain.Message{stale, theirs}); !reflect.DeepEqual(g, w) {
			t.Fatalf("claimed while suspended %v, want %v", g, w)
		}
		// Held past its schedule: still held, not counted as an attempt
		// (the others come back as their leases lapsed).
		got, err = st.ClaimDue(ctx, "a", at(2*time.Hour), lease, 100)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := sortedIDs(got), sortedIDs([]domain.Message{stale, theirs}); !reflect.DeepEqual(g, w) {
			t.Fatalf("claimed past the schedule while suspended %v, want %v", g, w)
		}
		if err := st.ResumeSubtree(ctx, acc.ID); err != nil {
			t.Fatal(err)
		}
		got, err = st.ClaimDue(ctx, "a", at(2*time.Hour+time.Second), lease, 100)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := sortedIDs(got), sortedIDs([]domain.Message{held, scheduled}); !reflect.DeepEqual(g, w) {
			t.Fatalf("claimed after resume %v, want %v", g, w)
		}
		for _, m := range got {
			if m.Attempts != 1 {
				t.Errorf("%s: %d attempts after being held, want 1", m.ID, m.Attempts)
			}
		}
	})
}

// TestSuspendOverlappingConcurrently: a parent and its child suspended at
// the same moment end the same whichever commits first (on PostgreSQL
// the two transactions lock the tree top down, so they take turns rather
// than deadlock), and so do their resumes.
func TestSuspendOverlappingConcurrently(t *testing.T) {
	eachStore(t, func(t *testing.T, ctx context.Context, st *store.Store) {
		ids := tree(t, st, [][2]string{{"r", ""}, {"c", "r"}, {"s", "r"}, {"g", "c"}})
		for round := range 10 {
			errs := make(chan error, 2)
			go func() { errs <- st.SuspendSubtree(ctx, ids["r"], at(time.Duration(round)*time.Hour)) }()
			go func() { errs <- st.SuspendSubtree(ctx, ids["c"], at(time.Duration(round)*time.Hour)) }()
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
			}
			want := map[string]string{"r": "r", "s": "r", "c": "c", "g": "c"}
			if got := suspensions(t, st, ids); !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d: suspended by\n got %v\nwant %v", round, got, want)
			}
			go func() { errs <- st.ResumeSubtree(ctx, ids["r"]) }()
			go func() { errs <- st.ResumeSubtree(ctx, ids["c"]) }()
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
			}
			none := map[string]string{"r": "", "s": "", "c": "", "g": ""}
			if got := suspensions(t, st, ids); !reflect.DeepEqual(got, none) {
				t.Fatalf("round %d: after both resumes\n got %v", round, got)
			}
		}
	})
}
