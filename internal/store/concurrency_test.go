package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"msgsvc/internal/store"
	"msgsvc/internal/store/storetest"
)

func TestConcurrentDebitsNeverOverdraw(t *testing.T) {
	tests := []struct {
		name      string
		balance   int64
		workers   int
		perBatch  int   // sends in each worker's batch
		costEach  int64 // charge of each send
		wantSends int
	}{
		{"single sends", 25 * credit, 40, 1, credit, 25},
		{"group commits", 25 * credit, 10, 4, credit, 25},
		{"uneven costs", 10 * credit, 12, 1, 3 * credit, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
				ctx := context.Background()
				acc := newAccount(t, st, tc.balance)

				// A watcher reads the balance throughout: it must never be
				// seen below zero, not only at the end.
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
						a, err := st.Account(ctx, acc.ID)
						if err == nil && a.Balance < 0 {
							err = fmt.Errorf("balance seen at %d", a.Balance)
						}
						if err != nil {
							watcher <- err
							return
						}
					}
				}()

				var ok, refused atomic.Int64
				var wg sync.WaitGroup
				errs := make(chan error, tc.workers)
				for w := 0; w < tc.workers; w++ {
					sends := make([]store.Send, tc.perBatch)
					for i := range sends {
						sends[i] = newSend(acc, "live", at(time.Duration(w*tc.perBatch+i)*time.Millisecond), tc.costEach, 1)
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						res, err := st.CommitSends(ctx, sends)
						if err != nil {
							errs <- err
							return
						}
						for _, r := range res {
							switch {
							case r.Err == nil && r.Replay == nil:
								ok.Add(1)
							case errors.Is(r.Err, store.ErrInsufficientCredits):
								refused.Add(1)
							default:
								errs <- fmt.Errorf("unexpected result %+v", r)
							}
						}
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
				total := tc.workers * tc.perBatch
				if ok.Load() != int64(tc.wantSends) || refused.Load() != int64(total-tc.wantSends) {
					t.Errorf("accepted %d, refused %d; want %d and %d", ok.Load(), refused.Load(), tc.wantSends, total-tc.wantSends)
				}
				checkBalance(t, st, acc.ID, tc.balance-int64(tc.wantSends)*tc.costEach)
			})
		})
	}
}

func TestConcurrentIdempotentBatches(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		ctx := context.Background()
		const pairs = 8 // each pair of batches carries the same two keys
		acc := newAccount(t, st, 100*credit)

		type outcome struct {
			key    string
			result store.SendResult
		}
		results := make(chan outcome, 4*pairs)
		errs := make(chan error, 2*pairs)
		var wg sync.WaitGroup
		for p := 0; p < pairs; p++ {
			for dup := 0; dup < 2; dup++ {
				keys := []string{fmt.Sprintf("k%d", 2*p), fmt.Sprintf("k%d", 2*p+1)}
				sends := make([]store.Send, len(keys))
				for i, k := range keys {
					created := at(time.Duration(p*10+dup*2+i) * time.Millisecond)
					sends[i] = withIdem(newSend(acc, "live", created, credit, 2), k, "hash-"+k)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := st.CommitSends(ctx, sends)
					if err != nil {
						errs <- err
						return
					}
					for i, r := range res {
						results <- outcome{keys[i], r}
					}
				}()
			}
		}
		wg.Wait()
		close(results)
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}

		accepted := map[string]int{}
		replayed := map[string]int{}
		for o := range results {
			switch r := o.result; {
			case r.Err == nil && r.Replay == nil:
				accepted[o.key]++
			case r.Err == nil && r.Replay != nil:
				stored, err := st.Idempotency(ctx, "key_test", o.key)
				if err != nil || string(r.Replay.Response) != string(stored.Response) {
					t.Errorf("%s: replayed %q, stored %q (%v)", o.key, r.Replay.Response, stored.Response, err)
				}
				replayed[o.key]++
			default:
				t.Errorf("%s: unexpected result %+v", o.key, r)
			}
		}
		for k := 0; k < 2*pairs; k++ {
			key := fmt.Sprintf("k%d", k)
			if accepted[key] != 1 || replayed[key] != 1 {
				t.Errorf("key %s: accepted %d, replayed %d; want one each", key, accepted[key], replayed[key])
			}
		}
		// Each accepted send carries two messages of one credit.
		checkBalance(t, st, acc.ID, 100*credit-int64(2*2*pairs)*credit)
	})
}
