package store_test

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/store"
)

func TestClaimDue(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		c := newCampaign(acc, "live", at(-time.Hour), 7)
		msg := func(i int, next time.Time) domain.Message {
			m := newMessage(c, fmt.Sprintf("3461000000%d", i), 0, at(-time.Hour+time.Duration(i)*time.Millisecond))
			m.NextAttemptAt = next
			return m
		}
		due1, due2, due3 := msg(0, at(-3*time.Minute)), msg(1, at(-2*time.Minute)), msg(2, at(-time.Minute))
		due1.Attempts = 2 // a retried message keeps counting
		dueNow := msg(3, t0)
		later := msg(4, at(time.Hour))
		later.ScheduledAt = at(time.Hour)
		muchLater := msg(5, at(2*time.Hour))
		muchLater.ScheduledAt = at(2 * time.Hour)
		idle := msg(6, time.Time{})
		idle.Status = "SENT"
		all := []domain.Message{due1, due2, due3, dueNow, later, muchLater, idle}
		insertMessages(t, st, c, all...)

		attempts := map[string]int{}
		for _, m := range all {
			attempts[m.ID] = m.Attempts
		}
		const lease = 30 * time.Second
		steps := []struct {
			name  string
			owner string
			now   time.Time
			limit int
			want  []domain.Message
		}{
			{"limit takes the longest waiting", "a", t0, 3, []domain.Message{due1, due2, due3}},
			{"due exactly now", "a", t0, 100, []domain.Message{dueNow}},
			{"leased messages are not due for another owner", "b", t0, 100, nil},
			{"nor a millisecond before the lease ends", "b", t0.Add(lease - time.Millisecond), 100, nil},
			{"claimable again once the lease passed", "b", t0.Add(lease), 100, []domain.Message{due1, due2, due3, dueNow}},
			{"scheduled messages when their time comes", "c", at(time.Hour), 100, []domain.Message{due1, due2, due3, dueNow, later}},
			{"everything due, never the idle one", "d", at(3 * time.Hour), 100, []domain.Message{due1, due2, due3, dueNow, later, muchLater}},
		}
		for _, s := range steps {
			got, err := st.ClaimDue(ctx, s.owner, s.now, lease, s.limit)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if g, w := sortedIDs(got), sortedIDs(s.want); !reflect.DeepEqual(g, w) {
				t.Fatalf("%s: claimed %v, want %v", s.name, g, w)
			}
			for _, m := range got {
				attempts[m.ID]++
				if m.LeaseOwner != s.owner || !m.NextAttemptAt.Equal(s.now.Add(lease)) || m.Attempts != attempts[m.ID] {
					t.Errorf("%s: %s owner %q next %v attempts %d; want %q, %v, %d", s.name, m.ID,
						m.LeaseOwner, m.NextAttemptAt, m.Attempts, s.owner, s.now.Add(lease), attempts[m.ID])
				}
				// The claim returns the row as stored.
				stored, err := st.MessageByID(ctx, m.ID)
				if err != nil || !reflect.DeepEqual(stored, m) {
					t.Errorf("%s: stored %+v (%v), returned %+v", s.name, stored, err, m)
				}
			}
		}
		got, err := st.MessageByID(ctx, idle.ID)
		if err != nil || !reflect.DeepEqual(got, idle) {
			t.Errorf("idle message changed: %+v (%v)", got, err)
		}
	})
}

func TestClaimDueConcurrentOwners(t *testing.T) {
	eachStore(t, func(t *testing.T, ctx context.Context, st *store.Store) {
		const total, owners = 200, 2
		acc := newAccount(t, st, 0)
		// Campaigns of 25: one multi-row INSERT of 200 messages costs
		// seconds on SQLite under -race (see insertMessages' chunk size).
		var msgs []domain.Message
		for len(msgs) < total {
			c := newCampaign(acc, "live", at(-time.Hour+time.Duration(len(msgs))*time.Millisecond), 25)
			batch := make([]domain.Message, 25)
			for i := range batch {
				n := len(msgs) + i
				batch[i] = newMessage(c, fmt.Sprintf("3462%07d", n), 0, at(-time.Hour+time.Duration(n)*time.Millisecond))
			}
			insertMessages(t, st, c, batch...)
			msgs = append(msgs, batch...)
		}

		claimed := make([][]domain.Message, owners)
		errs := make([]error, owners)
		var wg sync.WaitGroup
		for o := 0; o < owners; o++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				owner := fmt.Sprintf("worker-%d", o)
				for {
					got, err := st.ClaimDue(ctx, owner, t0, time.Minute, 10)
					if err != nil {
						errs[o] = err
						return
					}
					if len(got) == 0 {
						return
					}
					claimed[o] = append(claimed[o], got...)
				}
			}()
		}
		wg.Wait()

		seen := map[string]string{}
		for o, got := range claimed {
			if errs[o] != nil {
				t.Fatalf("owner %d: %v", o, errs[o])
			}
			owner := fmt.Sprintf("worker-%d", o)
			for _, m := range got {
				if prev, dup := seen[m.ID]; dup {
					t.Errorf("%s claimed by %s and %s", m.ID, prev, owner)
				}
				seen[m.ID] = owner
				if m.LeaseOwner != owner || m.Attempts != 1 {
					t.Errorf("%s: owner %q attempts %d, want %q and 1", m.ID, m.LeaseOwner, m.Attempts, owner)
				}
			}
		}
		if len(seen) != total {
			t.Errorf("claimed %d distinct messages, want %d", len(seen), total)
		}
		for _, m := range msgs {
			stored, err := st.MessageByID(ctx, m.ID)
			if err != nil || stored.LeaseOwner != seen[m.ID] || stored.Attempts != 1 {
				t.Errorf("%s stored with owner %q attempts %d (%v), claimed by %q", m.ID, stored.LeaseOwner, stored.Attempts, err, seen[m.ID])
			}
		}
	})
}

func sortedIDs(msgs []domain.Message) []string {
	out := ids(msgs)
	sort.Strings(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

// TestRenewMessages: an owner renews its lease only on rows it still holds
// with the lease end it knows. After its lease lapsed and a claim (even
// under the same owner name) moved the row's lease, the old holder's
// renewal finds nothing, so it cannot hand the row over alongside the
// claimer.
func TestRenewMessages(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		c := newCampaign(acc, "live", at(-time.Hour), 3)
		const lease = 30 * time.Second
		var all []domain.Message
		for i := range 3 {
			m := newMessage(c, fmt.Sprintf("3461000000%d", i), 0, at(-time.Hour+time.Duration(i)*time.Millisecond))
			m.LeaseOwner, m.NextAttemptAt = "node-1", t0.Add(lease) // written leased, as a send hands over
			all = append(all, m)
		}
		insertMessages(t, st, c, all...)
		held := map[string]time.Time{}
		for _, m := range all {
			held[m.ID] = m.NextAttemptAt
		}
		// Under way, before the lease ends: every row renewed.
		now := t0.Add(20 * time.Second)
		got, err := st.RenewMessages(ctx, "node-1", held, now, lease)
		if err != nil || len(got) != 3 {
			t.Fatalf("renewed %v (%v), want all 3", got, err)
		}
		for _, m := range all {
			stored, err := st.MessageByID(ctx, m.ID)
			if err != nil || !stored.NextAttemptAt.Equal(now.Add(lease)) {
				t.Fatalf("%s leased until %v (%v), want %v", m.ID, stored.NextAttemptAt, err, now.Add(lease))
			}
			held[m.ID] = now.Add(lease)
		}
		if claimed, err := st.ClaimDue(ctx, "node-1", t0.Add(lease), lease, 10); err != nil || len(claimed) != 0 {
			t.Fatalf("claimed %d renewed rows (%v) when the first lease would have ended", len(claimed), err)
		}
		// The lease lapses and the poll of the same node claims one row.
		lapsed := now.Add(lease)
		claimed, err := st.ClaimDue(ctx, "node-1", lapsed, lease, 1)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claimed %d (%v), want 1", len(claimed), err)
		}
		got, err = st.RenewMessages(ctx, "node-1", held, lapsed.Add(time.Second), lease)
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(got)
		var want []string
		for _, m := range all {
			if m.ID != claimed[0].ID {
				want = append(want, m.ID)
			}
		}
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("renewed %v, want %v: never the row the claim took", got, want)
		}
		// Another owner's renewal takes nothing.
		if got, err := st.RenewMessages(ctx, "node-2", map[string]time.Time{claimed[0].ID: claimed[0].NextAttemptAt}, lapsed, lease); err != nil || len(got) != 0 {
			t.Fatalf("node-2 renewed %v (%v)", got, err)
		}
	})
}
