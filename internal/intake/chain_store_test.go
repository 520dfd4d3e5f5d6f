package intake

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// Charging a sub-account's send at every level, on both dialects.

// newTreeAccount stores an account under parent ("" at the top) paying
// price a segment at home, topped up with balance.
func newTreeAccount(t testing.TB, st *store.Store, parent string, price, balance int64) domain.Account {
	t.Helper()
	ctx := context.Background()
	a := domain.Account{ID: id.New(id.Account, t0), Name: "Tree", Tier: "pro", Currency: "EUR", CountryCode: "34",
		WebhookSecret: "whsec_tree", WAQualityTier: 1, CreatedAt: t0, ParentID: parent, Reseller: true, Prices: smsPrice(price)}
	if err := st.CreateAccount(ctx, a); err != nil {
		t.Fatalf("create account: %v", err)
	}
	if balance > 0 {
		if _, err := creditAccount(ctx, st, a.ID, balance, ledger.TopUp, "opening"); err != nil {
			t.Fatalf("top up: %v", err)
		}
	}
	got, err := st.Account(ctx, a.ID)
	if err != nil {
		t.Fatalf("read account: %v", err)
	}
	return got
}

func TestChainCommit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		ctx := context.Background()
		top := newTreeAccount(t, st, "", credit, 10*credit)
		mid := newTreeAccount(t, st, top.ID, 3*credit/2, 2*credit)
		leaf := newTreeAccount(t, st, mid.ID, 2*credit, 10*credit)
		other := newTreeAccount(t, st, "", credit, 10*credit) // another tree: never charged

		err := st.Write(ctx, func(tx *store.Tx) error {
			up, err := tx.Ancestors(ctx, leaf.ID)
			if err != nil {
				return err
			}
			if len(up) != 2 || up[0].ID != mid.ID || up[1].ID != top.ID {
				return fmt.Errorf("ancestors of the leaf: %+v, want mid then top", up)
			}
			if up, err = tx.Ancestors(ctx, top.ID); err != nil || len(up) != 0 {
				return fmt.Errorf("ancestors of the top: %+v, %v", up, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}

		first := childSend(leaf, "live", at(time.Second), 1)
		tooMany := withIdem(childSend(leaf, "live", at(2*time.Second), 1), "k", "h") // mid holds 0.5 after the first
		res, err := commitSendsOn(st, ctx, []pendingSend{first, tooMany})
		if err != nil {
			t.Fatal(err)
		}
		if res[0] != (sendResult{}) || !errors.Is(res[1].err, ErrInsufficientCredits) {
			t.Fatalf("results %+v: want the first accepted and the second refused for its parent's balance", res)
		}
		checkBalance(t, st, leaf.ID, 8*credit)
		checkBalance(t, st, mid.ID, credit/2)
		checkBalance(t, st, top.ID, 9*credit)
		checkBalance(t, st, other.ID, 10*credit)
		checkSendWritten(t, st, "refused", tooMany, false)

		m, err := st.MessageByID(ctx, first.messages[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		want := []domain.Level{{AccountID: mid.ID, Charged: 3 * credit / 2}, {AccountID: top.ID, Charged: credit}}
		if len(m.Upline) != 2 || m.Upline[0] != want[0] || m.Upline[1] != want[1] {
			t.Fatalf("stored upline %+v, want %+v", m.Upline, want)
		}
		for _, acc := range []string{leaf.ID, mid.ID, top.ID} {
			lines, err := st.Ledger(ctx, acc, "", 10)
			if err != nil {
				t.Fatal(err)
			}
			if lines[0].Kind != ledger.Debit || lines[0].MessageID != m.ID || lines[0].CampaignID != first.campaign.ID {
				t.Errorf("%s: last line %+v, want the debit naming %s", acc, lines[0], m.ID)
			}
		}
		storetest.CheckUsage(t, st, leaf.ID)
	})
}

// Many concurrent sends by the children of one parent (1,000 with
// -short off, on three nodes on PostgreSQL): no balance is ever seen below
// zero, every balance equals its ledger's sum, and the totals are exact.
func TestChainConcurrentSendsNeverOverdraw(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, dsn string) {
		ctx := context.Background()
		children, workers, perBatch, covered := 4, 40, 3, 30
		if !testing.Short() {
			children, workers, perBatch, covered = 8, 250, 4, 600
		}
		top := newTreeAccount(t, st, "", credit, 10000*credit)
		// The parent covers only some of the sends; each child could pay
		// for all of its own.
		mid := newTreeAccount(t, st, top.ID, 3*credit/2, int64(covered)*3*credit/2)
		kids := make([]domain.Account, children)
		for i := range kids {
			kids[i] = newTreeAccount(t, st, mid.ID, 2*credit, int64(workers*perBatch)*2*credit)
		}
		nodes := []*store.Store{st}
		if st.Dialect() == store.Postgres {
			nodes = nil
			for i := 0; i < 3; i++ {
				nodes = append(nodes, storetest.OpenWith(t, dsn, store.Options{Holder: fmt.Sprintf("node-%d", i)}))
			}
		}

		stop := make(chan struct{})
		watcher := make(chan error, 1)
		go func() {
			for {
				select {
				case <-stop:
					watcher <- nil
					return
				default:
				}
				for _, acc := range []string{top.ID, mid.ID} {
					a, err := st.Account(ctx, acc)
					if err == nil && a.Balance < 0 {
						err = fmt.Errorf("%s: balance seen at %d", acc, a.Balance)
					}
					if err != nil {
						watcher <- err
						return
					}
				}
			}
		}()

		var ok, refused atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := 0; w < workers; w++ {
			sends := make([]pendingSend, perBatch)
			for i := range sends {
				sends[i] = childSend(kids[(w+i)%children], "live", at(time.Duration(w*perBatch+i)*time.Millisecond), 1)
			}
			wg.Add(1)
			node := nodes[w%len(nodes)]
			go func() {
				defer wg.Done()
				res, err := commitSendsOn(node, ctx, sends)
				if err != nil {
					errs <- err
					return
				}
				tally(res, &ok, &refused, errs)
			}()
		}
		wg.Wait()
		close(stop)
		if err := <-watcher; err != nil {
			t.Error(err)
		}
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		total := int64(workers * perBatch)
		if ok.Load() != int64(covered) || refused.Load() != total-int64(covered) {
			t.Fatalf("accepted %d, refused %d; want %d and %d", ok.Load(), refused.Load(), covered, total-int64(covered))
		}
		checkBalance(t, st, mid.ID, 0)
		checkBalance(t, st, top.ID, 10000*credit-int64(covered)*credit)
		var kidsPaid int64
		for _, k := range kids {
			a, err := st.Account(ctx, k.ID)
			if err != nil {
				t.Fatal(err)
			}
			checkBalance(t, st, k.ID, a.Balance)
			kidsPaid += total*2*credit - a.Balance
			storetest.CheckUsage(t, st, k.ID)
		}
		if kidsPaid != int64(covered)*2*credit {
			t.Fatalf("the children paid %d in all, want %d", kidsPaid, int64(covered)*2*credit)
		}
	})
}
