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
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// Sends charged at every level of a three-level chain, while credits move
// up and down it by transfers, all at once (1,000 sends with -short off,
// on three nodes on PostgreSQL): no balance goes below zero, each equals
// its ledger's sum, and the total is exactly what was put in less what
// the accepted sends cost at every level; transfers create and lose
// nothing.
func TestChainSendsAndTransfersConcurrently(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, dsn string) {
		ctx := context.Background()
		workers, perBatch, moves := 40, 3, 60
		if !testing.Short() {
			workers, perBatch, moves = 250, 4, 400
		}
		// Prices a segment: the top pays 1, the middle 1.5, each leaf 2.
		const perSend = credit + 3*credit/2 + 2*credit
		// The leaves can pay for about half of the sends, the middle and
		// the top for all of them, with what the transfers move between.
		top := newTreeAccount(t, st, "", credit, 3000*credit)
		mid := newTreeAccount(t, st, top.ID, 3*credit/2, 1500*credit)
		leaves := []domain.Account{newTreeAccount(t, st, mid.ID, 2*credit, 500*credit), newTreeAccount(t, st, mid.ID, 2*credit, 500*credit)}
		all := []string{top.ID, mid.ID, leaves[0].ID, leaves[1].ID}
		const opening = 5500 * credit
		nodes := []*store.Store{st}
		if st.Dialect() == store.Postgres {
			nodes = nil
			for i := 0; i < 3; i++ {
				nodes = append(nodes, storetest.OpenWith(t, dsn, store.Options{Holder: fmt.Sprintf("node-%d", i)}))
			}
		}

		// Every send is accepted or refused for its credits: one that
		// fails (a deadlock between writers, surfacing past the write
		// queue's retries) is a bug, however busy the chain.
		var accepted, refused, moved, short, busy atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, workers+moves)
		for w := 0; w < workers; w++ {
			sends := make([]pendingSend, perBatch)
			for i := range sends {
				sends[i] = childSend(leaves[(w+i)%len(leaves)], "live", at(time.Duration(w*perBatch+i)*time.Millisecond), 1)
			}
			node := nodes[w%len(nodes)]
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := commitSendsOn(node, ctx, sends)
				if err != nil {
					errs <- fmt.Errorf("send: %w", err)
					return
				}
				tally(res, &accepted, &refused, errs)
			}()
		}
		// Transfers both ways on both links of the chain, some too large.
		links := [][2]string{{top.ID, mid.ID}, {mid.ID, leaves[0].ID}, {mid.ID, leaves[1].ID}}
		for m := 0; m < moves; m++ {
			link := links[m%len(links)]
			amount := int64(m%7+1) * 5 * credit
			if m%2 == 1 {
				amount = -amount
			}
			node := nodes[m%len(nodes)]
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := node.Transfer(ctx, link[0], link[1], amount, "rebalance", at(time.Duration(m)*time.Millisecond))
				switch {
				case err == nil:
					moved.Add(1)
				case errors.Is(err, ledger.ErrInsufficientCredits), errors.Is(err, domain.ErrChildShort):
					short.Add(1)
				case errors.Is(err, domain.ErrStorageUnavailable):
					// Lost to other writers past the store's retries: nothing
					// moved, and the API tells the caller to retry.
					busy.Add(1)
				default:
					errs <- fmt.Errorf("transfer %v %d: %w", link, amount, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if accepted.Load()+refused.Load() != int64(workers*perBatch) || accepted.Load() == 0 || moved.Load() == 0 {
			t.Fatalf("sends accepted %d, refused %d; transfers made %d, refused %d", accepted.Load(), refused.Load(), moved.Load(), short.Load())
		}
		var total int64
		for _, a := range all {
			acc, err := st.Account(ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			checkBalance(t, st, a, acc.Balance) // equal to its ledger, not below zero
			total += acc.Balance
		}
		if want := opening - accepted.Load()*perSend; total != want {
			t.Fatalf("balances add up to %d, want %d (%d sends accepted at %d each)", total, want, accepted.Load(), perSend)
		}
		t.Logf("%d sends accepted, %d refused; %d transfers made, %d refused, %d to be retried", accepted.Load(),
			refused.Load(), moved.Load(), short.Load(), busy.Load())
	})
}
