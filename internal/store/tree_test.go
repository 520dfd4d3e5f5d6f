package store_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
)

// newChild makes an account under parent (which must be a reseller) and,
// when reseller, makes it one too. created orders siblings.
func newChild(t *testing.T, st *store.Store, parent domain.Account, reseller bool, created time.Time) domain.Account {
	t.Helper()
	ctx := context.Background()
	a := domain.Account{ID: id.New(id.Account, created), Name: "Child of " + parent.Name, Tier: "standard", Currency: parent.Currency,
		CountryCode: "ES", WebhookSecret: "whsec_child", ParentID: parent.ID, CreatedAt: created}
	if err := st.CreateChild(ctx, a); err != nil {
		t.Fatalf("create child of %s: %v", parent.ID, err)
	}
	if reseller {
		if err := st.SetReseller(ctx, a.ID, true); err != nil {
			t.Fatalf("make %s a reseller: %v", a.ID, err)
		}
	}
	got, err := st.Account(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func accountIDs(list []domain.Account) []string {
	out := []string{}
	for _, a := range list {
		out = append(out, a.ID)
	}
	return out
}

func sameIDs(t *testing.T, what string, got []domain.Account, want ...string) {
	t.Helper()
	g := accountIDs(got)
	if len(g) != len(want) {
		t.Fatalf("%s = %v, want %v", what, g, want)
	}
	for i := range g {
		if g[i] != want[i] {
			t.Fatalf("%s = %v, want %v", what, g, want)
		}
	}
}

func TestTreeShape(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, top domain.Account) {
		if err := st.CreateChild(ctx, domain.Account{ID: id.New(id.Account, t0), ParentID: top.ID, CreatedAt: t0}); !errors.Is(err, domain.ErrNotReseller) {
			t.Fatalf("child of a non-reseller: err = %v, want ErrNotReseller", err)
		}
		if err := st.SetReseller(ctx, top.ID, true); err != nil {
			t.Fatal(err)
		}
		mid := newChild(t, st, top, true, at(1*time.Minute))
		leaf := newChild(t, st, mid, false, at(2*time.Minute))
		sibling := newChild(t, st, top, false, at(3*time.Minute))
		other := newAccount(t, st, 0)

		if mid.ParentID != top.ID || !mid.Reseller || leaf.Reseller {
			t.Fatalf("mid = %+v, leaf = %+v", mid, leaf)
		}
		kids, err := st.Children(ctx, top.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameIDs(t, "children of top", kids, mid.ID, sibling.ID)
		below, err := st.Subtree(ctx, top.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameIDs(t, "subtree of top", below, mid.ID, sibling.ID, leaf.ID)
		up, err := st.Ancestors(ctx, leaf.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameIDs(t, "ancestors of leaf", up, mid.ID, top.ID)
		if up, err = st.Ancestors(ctx, top.ID); err != nil || len(up) != 0 {
			t.Fatalf("ancestors of top = %v, %v; want none", accountIDs(up), err)
		}
		if _, err := st.Ancestors(ctx, "acc_nope"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("ancestors of unknown: %v", err)
		}
		for _, c := range []struct {
			root, acc string
			want      bool
		}{
			{top.ID, top.ID, true}, {top.ID, leaf.ID, true}, {mid.ID, leaf.ID, true}, {top.ID, sibling.ID, true},
			{mid.ID, sibling.ID, false}, {sibling.ID, mid.ID, false}, {leaf.ID, mid.ID, false}, {mid.ID, top.ID, false},
			{other.ID, leaf.ID, false}, {top.ID, other.ID, false}, {top.ID, "acc_nope", false},
		} {
			got, err := st.InSubtree(ctx, c.root, c.acc)
			if err != nil || got != c.want {
				t.Errorf("InSubtree(%s, %s) = %v, %v; want %v", c.root, c.acc, got, err, c.want)
			}
		}

		// The third level is the deepest: it has no children and cannot
		// become a reseller.
		if err := st.SetReseller(ctx, leaf.ID, true); !errors.Is(err, domain.ErrTreeTooDeep) {
			t.Fatalf("reseller at the deepest level: err = %v", err)
		}
		if err := st.CreateChild(ctx, domain.Account{ID: id.New(id.Account, t0), ParentID: leaf.ID, CreatedAt: t0}); !errors.Is(err, domain.ErrNotReseller) {
			t.Fatalf("child of a leaf: err = %v", err)
		}
		// A reseller made at the deepest level is refused before it is written.
		deep := domain.Account{ID: id.New(id.Account, t0), ParentID: mid.ID, Reseller: true, CreatedAt: t0}
		if err := st.CreateChild(ctx, deep); !errors.Is(err, domain.ErrTreeTooDeep) {
			t.Fatalf("a reseller child at the deepest level: err = %v", err)
		}
		if _, err := st.Account(ctx, deep.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("the refused child was stored: %v", err)
		}
		if err := st.SetReseller(ctx, mid.ID, false); !errors.Is(err, domain.ErrHasChildren) {
			t.Fatalf("un-reseller with children: err = %v", err)
		}
		if err := st.SetReseller(ctx, "acc_nope", true); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("unknown reseller: err = %v", err)
		}
		if err := st.CreateChild(ctx, domain.Account{ID: id.New(id.Account, t0), ParentID: "acc_nope", CreatedAt: t0}); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("child of unknown: err = %v", err)
		}
		if err := st.SetBilling(ctx, leaf.ID, domain.BillDelivery); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.Account(ctx, leaf.ID); !got.BillsOnDelivery() {
			t.Fatalf("billing = %q", got.Billing)
		}
		if err := st.SetBilling(ctx, "acc_nope", domain.BillDelivery); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("billing of unknown: %v", err)
		}
	})
}

// TestTreeTooDeep makes a deep chain by hand (as a bad import
// might) and checks CreateChild still refuses to go deeper.
func TestTreeTooDeep(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, top domain.Account) {
		if err := st.SetReseller(ctx, top.ID, true); err != nil {
			t.Fatal(err)
		}
		mid := newChild(t, st, top, true, at(4*time.Minute))
		leaf := newChild(t, st, mid, false, at(5*time.Minute))
		// A leaf marked reseller before the rule existed still has no children.
		if err := st.Exec(ctx, `UPDATE accounts SET reseller = 1 WHERE id = $1`, leaf.ID); err != nil {
			t.Fatal(err)
		}
		err := st.CreateChild(ctx, domain.Account{ID: id.New(id.Account, t0), ParentID: leaf.ID, CreatedAt: t0})
		if !errors.Is(err, domain.ErrTreeTooDeep) {
			t.Fatalf("fourth level: err = %v, want ErrTreeTooDeep", err)
		}
	})
}

func checkBooks(t *testing.T, ctx context.Context, st *store.Store, accs ...string) int64 {
	t.Helper()
	var total int64
	for _, a := range accs {
		acc, err := st.Account(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := st.LedgerSum(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if acc.Balance != sum || acc.Balance < 0 {
			t.Errorf("%s: balance %d, ledger sum %d", a, acc.Balance, sum)
		}
		total += acc.Balance
	}
	return total
}

func TestTransfer(t *testing.T) {
	eachAccount(t, 10*credit, func(t *testing.T, ctx context.Context, st *store.Store, top domain.Account) {
		if err := st.SetReseller(ctx, top.ID, true); err != nil {
			t.Fatal(err)
		}
		child := newChild(t, st, top, true, at(6*time.Minute))
		grand := newChild(t, st, child, false, at(7*time.Minute))
		other := newAccount(t, st, 5*credit)

		pb, cb, err := st.Transfer(ctx, top.ID, child.ID, 4*credit, "first month", at(1))
		if err != nil || pb != 6*credit || cb != 4*credit {
			t.Fatalf("transfer = %d, %d, %v", pb, cb, err)
		}
		pb, cb, err = st.Transfer(ctx, top.ID, child.ID, -credit, "take back", at(2))
		if err != nil || pb != 7*credit || cb != 3*credit {
			t.Fatalf("take back = %d, %d, %v", pb, cb, err)
		}
		if _, _, err := st.Transfer(ctx, top.ID, child.ID, 8*credit, "", at(3)); !errors.Is(err, ledger.ErrInsufficientCredits) {
			t.Fatalf("parent short: err = %v", err)
		}
		if _, _, err := st.Transfer(ctx, top.ID, child.ID, -4*credit, "", at(3)); !errors.Is(err, domain.ErrChildShort) || errors.Is(err, ledger.ErrInsufficientCredits) {
			t.Fatalf("child short: err = %v", err)
		}
		// Only between a parent and its own child: never a grandchild, a
		// parent, a stranger.
		for _, c := range [][2]string{{top.ID, grand.ID}, {child.ID, top.ID}, {other.ID, child.ID}, {top.ID, other.ID}, {top.ID, "acc_nope"}, {"", top.ID}} {
			if _, _, err := st.Transfer(ctx, c[0], c[1], credit, "", at(4)); !errors.Is(err, domain.ErrNotFound) {
				t.Errorf("transfer %s → %s: err = %v, want ErrNotFound", c[0], c[1], err)
			}
		}
		if total := checkBooks(t, ctx, st, top.ID, child.ID, grand.ID, other.ID); total != 15*credit {
			t.Fatalf("total = %d", total)
		}
		lines, err := st.Ledger(ctx, child.ID, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) != 2 || lines[0].Kind != ledger.Transfer || lines[0].Counterparty != top.ID || lines[0].Amount != -credit ||
			lines[0].Note != "take back" || lines[0].BalanceAfter != 3*credit {
			t.Fatalf("child's ledger = %+v", lines)
		}
		lines, err = st.Ledger(ctx, top.ID, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) != 3 || lines[0].Counterparty != child.ID || lines[0].Amount != credit || lines[1].Amount != -4*credit ||
			lines[1].Counterparty != child.ID {
			t.Fatalf("parent's ledger = %+v", lines)
		}
	})
}

// TestTransferConcurrent moves credits up and down a three-level chain
// from many goroutines at once: every move is all or nothing, so the
// balances always equal their ledgers, none goes negative and the total is
// what the operator put in.
func TestTransferConcurrent(t *testing.T) {
	eachAccount(t, 1000*credit, func(t *testing.T, ctx context.Context, st *store.Store, top domain.Account) {
		if err := st.SetReseller(ctx, top.ID, true); err != nil {
			t.Fatal(err)
		}
		child := newChild(t, st, top, true, at(8*time.Minute))
		grand := newChild(t, st, child, false, at(9*time.Minute))
		sibling := newChild(t, st, top, false, at(10*time.Minute))
		pairs := [][2]string{{top.ID, child.ID}, {child.ID, grand.ID}, {top.ID, sibling.ID}}
		const workers, moves = 16, 40
		var wg sync.WaitGroup
		var mu sync.Mutex
		refused := 0
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(w), 7))
				for range moves {
					p := pairs[r.IntN(len(pairs))]
					amount := int64(r.IntN(300)-100) * credit
					if amount == 0 {
						amount = credit
					}
					_, _, err := st.Transfer(ctx, p[0], p[1], amount, "", t0)
					switch {
					case err == nil:
					case errors.Is(err, ledger.ErrInsufficientCredits), errors.Is(err, domain.ErrChildShort):
						mu.Lock()
						refused++
						mu.Unlock()
					default:
						t.Errorf("transfer: %v", err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if total := checkBooks(t, ctx, st, top.ID, child.ID, grand.ID, sibling.ID); total != 1000*credit {
			t.Fatalf("total = %d, want %d", total, 1000*credit)
		}
		t.Logf("%d of %d moves refused for want of credits", refused, workers*moves)
	})
}

// TestResellerMargins: a reseller's margin on each child is what the child
// paid for its subtree's messages less what the reseller paid for them,
// refunds deducted; another tree's and the reseller's own messages count
// nowhere.
func TestResellerMargins(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, top domain.Account) {
		if err := st.SetReseller(ctx, top.ID, true); err != nil {
			t.Fatal(err)
		}
		child := newChild(t, st, top, true, at(1*time.Minute))
		grand := newChild(t, st, child, false, at(2*time.Minute))
		quiet := newChild(t, st, top, false, at(3*time.Minute))
		other := newAccount(t, st, 0)
		send := func(sender domain.Account, created time.Time, status domain.Status, charges map[string]int64) {
			t.Helper()
			c := newCampaign(sender, domain.Live, created, 1)
			m := newMessage(c, "34600000001", charges[sender.ID], created)
			m.Status, m.SentAt, m.Segments = status, created, 2
			err := st.Write(ctx, func(tx *store.Tx) error {
				if err := tx.InsertCampaign(ctx, c); err != nil {
					return err
				}
				if err := tx.InsertMessages(ctx, []domain.Message{m}); err != nil {
					return err
				}
				var lines []ledger.Entry
				for acc, amount := range charges {
					lines = append(lines, ledger.Entry{ID: id.New(id.Ledger, created), AccountID: acc, Amount: -amount, Kind: ledger.Debit,
						MessageID: m.ID, CreatedAt: created})
				}
				return tx.InsertLedger(ctx, lines)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		// The child's own message: it pays 5, the reseller 3.
		send(child, at(time.Hour), domain.Delivered, map[string]int64{child.ID: 5 * credit, top.ID: 3 * credit})
		// The grandchild's: it pays 9, the child 5, the reseller 3.
		send(grand, at(2*time.Hour), domain.Failed, map[string]int64{grand.ID: 9 * credit, child.ID: 5 * credit, top.ID: 3 * credit})
		// The reseller's own and a stranger's are no child's.
		send(top, at(3*time.Hour), domain.Delivered, map[string]int64{top.ID: 3 * credit})
		send(other, at(3*time.Hour), domain.Delivered, map[string]int64{other.ID: 3 * credit})

		rows, err := st.ResellerMargins(ctx, top.ID, t0, t0)
		if err != nil {
			t.Fatal(err)
		}
		want := []domain.MarginRow{
			{Key: child.ID, Messages: 2, Segments: 4, Price: 10 * credit, Cost: 6 * credit, Final: 2, Delivered: 1},
			{Key: quiet.ID},
		}
		if len(rows) != len(want) || rows[0] != want[0] || rows[1] != want[1] {
			t.Fatalf("reseller margins = %+v\nwant %+v", rows, want)
		}
		rows, err = st.ResellerMargins(ctx, child.ID, t0, t0)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0] != (domain.MarginRow{Key: grand.ID, Messages: 1, Segments: 2, Price: 9 * credit, Cost: 5 * credit, Final: 1}) {
			t.Fatalf("child's margins = %+v", rows)
		}
		if rows, err := st.ResellerMargins(ctx, top.ID, t0.AddDate(0, 0, 1), t0.AddDate(0, 0, 2)); err != nil || rows[0].Messages != 0 || rows[0].Price != 0 {
			t.Fatalf("another range = %+v, %v", rows, err)
		}
	})
}

// TestChildOfSuspendedParent: a child made under a suspended reseller
// carries the suspension, naming the account whose it is.
func TestChildOfSuspendedParent(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, top domain.Account) {
		if err := st.SetReseller(ctx, top.ID, true); err != nil {
			t.Fatal(err)
		}
		mid := newChild(t, st, top, true, at(time.Minute))
		if err := st.Exec(ctx, `UPDATE accounts SET suspended_at = $2, suspended_by = $3 WHERE id IN ($1, $3)`, mid.ID, t0.UnixMilli(), top.ID); err != nil {
			t.Fatal(err)
		}
		leaf := newChild(t, st, mid, false, at(2*time.Minute))
		if !leaf.Suspended() || leaf.SuspendedBy != top.ID || !leaf.SuspendedAt.Equal(t0) {
			t.Fatalf("child of a suspended parent: suspended at %v by %q", leaf.SuspendedAt, leaf.SuspendedBy)
		}
		other := newChild(t, st, top, false, at(3*time.Minute))
		if !other.Suspended() {
			t.Fatal("child of the suspended top is not suspended")
		}
	})
}
