package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/store"
)

// TestGroupedWritesFailAlone checks the promise of grouped writes on both
// engines, whatever PostgreSQL's pipeline sends when: a function that
// fails leaves no write behind and the others' writes are all committed,
// whether its failure is its own word (an error it returns), a statement
// of its that fails at once, or a queued write that fails only when a
// later function's statement or the commit takes it to the server.
func TestGroupedWritesFailAlone(t *testing.T) {
	eachAccount(t, 10*credit, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		campaign := func(n int) domain.Campaign {
			return domain.Campaign{ID: id.New(id.Campaign, at(time.Duration(n)*time.Millisecond)), AccountID: acc.ID, KeyID: "key_1",
				Env: domain.Live, Type: domain.SMS, Total: 1, CreatedAt: t0}
		}
		existing := campaign(0)
		if err := st.Write(ctx, func(tx *store.Tx) error { return tx.InsertCampaigns(ctx, []domain.Campaign{existing}) }); err != nil {
			t.Fatal(err)
		}
		steps := groupSteps(ctx, acc.ID, existing)
		// Every order of the steps' kinds meets every neighbour: run the
		// list forwards and backwards, each step with its own campaign.
		for round, order := range [][]int{{0, 1, 2, 3, 4, 5, 0, 2}, {5, 4, 3, 2, 1, 0, 2, 0}} {
			before, err := st.Account(ctx, acc.ID)
			if err != nil {
				t.Fatal(err)
			}
			var fns []func(tx *store.Tx) error
			var cs []domain.Campaign
			debits := int64(0)
			for i, k := range order {
				c := campaign(100*round + i + 1)
				cs = append(cs, c)
				fns = append(fns, steps[k].fn(c))
				if k == 2 {
					debits++
				}
			}
			results, err := st.WriteGroup(ctx, fns)
			if err != nil {
				t.Fatalf("round %d: group failed: %v", round, err)
			}
			for i, k := range order {
				s := steps[k]
				if failed := results[i] != nil; failed != s.failing {
					t.Errorf("round %d, %s: result %v", round, s.name, results[i])
				}
				_, err := st.Campaign(ctx, acc.ID, domain.Live, cs[i].ID)
				if written := err == nil; written == s.failing {
					t.Errorf("round %d, %s: campaign written %v (%v), want %v", round, s.name, written, err, !s.failing)
				}
			}
			after, err := st.Account(ctx, acc.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got := before.Balance - after.Balance; got != debits*credit {
				t.Errorf("round %d: balance fell by %d, want %d (the debits of the steps that succeeded)", round, got, debits*credit)
			}
		}
	})
}

// groupStep is a function of a write group and whether it fails.
type groupStep struct {
	name    string
	fn      func(c domain.Campaign) func(tx *store.Tx) error
	failing bool
}

// groupSteps are the kinds of function TestGroupedWritesFailAlone mixes;
// existing is a campaign already written (a duplicate of it fails).
func groupSteps(ctx context.Context, accountID string, existing domain.Campaign) []groupStep {
	refused := errors.New("refused")
	debit := func(tx *store.Tx) error {
		_, err := tx.AddBalance(ctx, accountID, -credit, t0)
		return err
	}
	return []groupStep{
		{"queued insert", func(c domain.Campaign) func(tx *store.Tx) error {
			return func(tx *store.Tx) error { return tx.InsertCampaigns(ctx, []domain.Campaign{c}) }
		}, false},
		{"queued insert that fails later (duplicate id)", func(c domain.Campaign) func(tx *store.Tx) error {
			return func(tx *store.Tx) error { return tx.InsertCampaigns(ctx, []domain.Campaign{c, existing}) }
		}, true},
		{"a read, then a queued insert", func(c domain.Campaign) func(tx *store.Tx) error {
			return func(tx *store.Tx) error {
				if err := debit(tx); err != nil {
					return err
				}
				return tx.InsertCampaigns(ctx, []domain.Campaign{c})
			}
		}, false},
		{"queued insert, then its own refusal", func(c domain.Campaign) func(tx *store.Tx) error {
			return func(tx *store.Tx) error {
				if err := tx.InsertCampaigns(ctx, []domain.Campaign{c}); err != nil {
					return err
				}
				return refused
			}
		}, true},
		{"a read, a queued insert, then its own refusal", func(c domain.Campaign) func(tx *store.Tx) error {
			return func(tx *store.Tx) error {
				if err := debit(tx); err != nil {
					return err
				}
				if err := tx.InsertCampaigns(ctx, []domain.Campaign{c}); err != nil {
					return err
				}
				return refused
			}
		}, true},
		{"a statement that fails at once", func(c domain.Campaign) func(tx *store.Tx) error {
			return func(tx *store.Tx) error {
				_, err := tx.AddBalance(ctx, accountID, -1000*credit, t0)
				return err
			}
		}, true},
	}
}
