package intake

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
	"github.com/msgsvc/msgsvc/internal/txn"
)

// The group commit of sends (commitSends) against both storage engines:
// refusals leave the rest of a batch alone, idempotency keys replay, and
// the balance never goes below zero under concurrency.

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const credit int64 = 1_000_000

func at(d time.Duration) time.Time { return t0.Add(d) }

// commitSendsOn commits a batch of sends as the Service does.
// tally counts a batch's results from concurrent senders: accepted,
// refused for want of credits, and anything else reported on errs.
func tally(res []sendResult, accepted, refused *atomic.Int64, errs chan<- error) {
	for _, r := range res {
		switch {
		case r == (sendResult{}):
			accepted.Add(1)
		case errors.Is(r.err, ErrInsufficientCredits):
			refused.Add(1)
		default:
			errs <- fmt.Errorf("unexpected send result %+v", r)
		}
	}
}

func commitSendsOn(st *store.Store, ctx context.Context, sends []pendingSend) ([]sendResult, error) {
	return (&Service{writer: storeWriter(st)}).commitSends(ctx, sends)
}

// storeWriter is the store's writer, its transactions seen as SendTx.
func storeWriter(st *store.Store) txn.Writer[SendTx] {
	return txn.As(st, func(tx *store.Tx) SendTx { return tx })
}

func creditAccount(ctx context.Context, st *store.Store, accountID string, amount int64, kind ledger.Kind, note string) (int64, error) {
	return bootstrap.AddCredits(ctx, st, accountID, amount, kind, note, t0)
}

func newAccount(t testing.TB, st *store.Store, balance int64) domain.Account {
	t.Helper()
	ctx := context.Background()
	a := domain.Account{ID: id.New(id.Account, t0), Name: "Acme", Tier: "pro", Currency: "EUR", CountryCode: "34",
		WebhookSecret: "whsec_first", WAQualityTier: 1, CreatedAt: t0}
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

// newSend bundles a campaign with n messages charged each micro-credits,
// made one millisecond apart from the campaign's creation.
func newSend(acc domain.Account, env domain.Environment, created time.Time, each int64, n int) pendingSend {
	c := domain.Campaign{ID: id.New(id.Campaign, created), AccountID: acc.ID, KeyID: "key_test", Env: env, Type: domain.SMS,
		CallbackURL: "https://hooks.example.com/cb", Total: n, CreatedAt: created}
	msgs := make([]domain.Message, n)
	for i := range msgs {
		at := created.Add(time.Duration(i) * time.Millisecond)
		msgs[i] = domain.Message{ID: id.New(id.Message, at), CampaignID: c.ID, AccountID: c.AccountID, Env: env,
			To: fmt.Sprintf("346%08d", i), CountryCode: "34", Type: domain.SMS, Channel: domain.SMS, Body: "hello",
			Status: domain.Sending, Segments: 1, Encoding: "GSM-7", Credits: each, Charged: each, CallbackURL: c.CallbackURL,
			CreatedAt: at, UpdatedAt: at, ExpiresAt: at.Add(24 * time.Hour), NextAttemptAt: at}
	}
	return pendingSend{campaign: c, messages: msgs}
}

func withIdem(s pendingSend, key, hash string) pendingSend {
	s.idem = &domain.Idempotency{KeyID: s.campaign.KeyID, Key: key, RequestHash: hash, StatusCode: 202,
		Response: []byte(`{"campaignId":"` + s.campaign.ID + `"}`), CreatedAt: s.campaign.CreatedAt}
	return s
}

var checkBalance = storetest.CheckBalance

func wantErr(t *testing.T, what string, got, want error) {
	t.Helper()
	if want == nil && got != nil || want != nil && !errors.Is(got, want) {
		t.Fatalf("%s: error %v, want %v", what, got, want)
	}
}

// sendCase is one send of a CommitSends batch and how it must end.
type sendCase struct {
	name       string
	send       pendingSend
	wantErr    error
	wantReplay *domain.Idempotency // the remembered response a replay returns
}

func TestCommitSends(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		ctx := context.Background()
		acc := newAccount(t, st, 10*credit)

		normal := newSend(acc, "live", at(time.Second), credit, 3)
		normal.messages[1].Charged, normal.messages[1].Credits = 2*credit, 2*credit
		normal.messages[2].Content = domain.Content{Media: &domain.Media{URL: "https://cdn.example.com/a.png"}}
		normal.messages[2].ScheduledAt = at(time.Hour)
		normal.messages[2].NextAttemptAt = at(time.Hour)
		tooDear := newSend(acc, "live", at(2*time.Second), 5*credit, 2)
		idem := withIdem(newSend(acc, "live", at(3*time.Second), credit, 1), "k1", "h1")
		refusedIdem := withIdem(newSend(acc, "live", at(4*time.Second), 100*credit, 1), "k2", "h2")
		free := newSend(acc, "test", at(5*time.Second), 0, 2)
		sameBatchDup := withIdem(newSend(acc, "live", at(6*time.Second), credit, 1), "k1", "h1")

		batches := []struct {
			name   string
			before func() // runs before the batch
			cases  []sendCase
		}{
			{"mixed batch", nil, []sendCase{
				{"normal send of 3 messages", normal, nil, nil},
				{"charge over the balance", tooDear, store.ErrInsufficientCredits, nil},
				{"first use of an idempotency key", idem, nil, nil},
				{"refused send with a key", refusedIdem, store.ErrInsufficientCredits, nil},
				{"free test send", free, nil, nil},
				{"same key twice in one batch", sameBatchDup, nil, idem.idem},
			}},
			{"reuse of keys", func() {
				if _, err := creditAccount(ctx, st, acc.ID, 100*credit, ledger.TopUp, "top up"); err != nil {
					t.Fatal(err)
				}
			}, []sendCase{
				{"same key and hash", withIdem(newSend(acc, "live", at(7*time.Second), credit, 1), "k1", "h1"), nil, idem.idem},
				{"same key, other hash", withIdem(newSend(acc, "live", at(8*time.Second), credit, 1), "k1", "h9"),
					domain.ErrIdempotencyConflict, nil},
				// The refused key was forgotten, so a retry after a top-up goes through.
				{"retry of the refused key", withIdem(newSend(acc, "live", at(9*time.Second), 100*credit, 1), "k2", "h2"), nil, nil},
			}},
		}

		balance := 10 * credit
		debits := map[string]ledger.Entry{}
		for _, b := range batches {
			if b.before != nil {
				b.before()
				balance += 100 * credit
			}
			sends := make([]pendingSend, len(b.cases))
			for i, c := range b.cases {
				sends[i] = c.send
			}
			res, err := commitSendsOn(st, ctx, sends)
			if err != nil {
				t.Fatalf("%s: %v", b.name, err)
			}
			if len(res) != len(sends) {
				t.Fatalf("%s: %d results for %d sends", b.name, len(res), len(sends))
			}
			for i, c := range b.cases {
				wantErr(t, c.name, res[i].err, c.wantErr)
				if !reflect.DeepEqual(res[i].replay, c.wantReplay) {
					t.Errorf("%s: replay %+v, want %+v", c.name, res[i].replay, c.wantReplay)
				}
				written := c.wantErr == nil && c.wantReplay == nil
				checkSendWritten(t, st, c.name, c.send, written)
				if !written {
					continue
				}
				// One debit line per charged message, each with the balance
				// it left, in message order.
				for _, m := range c.send.messages {
					if m.Charged == 0 {
						continue
					}
					balance -= m.Charged
					debits[m.ID] = ledger.Entry{AccountID: acc.ID, Amount: -m.Charged, BalanceAfter: balance,
						Kind: ledger.Debit, MessageID: m.ID, CampaignID: c.send.campaign.ID, CreatedAt: c.send.campaign.CreatedAt}
				}
			}
			checkBalance(t, st, acc.ID, balance)
			storetest.CheckUsage(t, st, acc.ID)
		}

		for _, k := range []string{"k1", "k2"} {
			got, err := st.Idempotency(ctx, "key_test", k)
			if err != nil {
				t.Fatalf("idempotency %s: %v", k, err)
			}
			if got.RequestHash != "h"+k[1:] || got.StatusCode != 202 {
				t.Errorf("idempotency %s = %+v", k, got)
			}
		}
		if len(debits) != 5 {
			t.Fatalf("test table accepts %d charged messages, want 5", len(debits))
		}
		checkDebits(t, st, acc.ID, debits)
	})
}

// checkSendWritten asserts that a send's campaign and messages were written
// exactly as given, or not at all.
func checkSendWritten(t *testing.T, st *store.Store, name string, snd pendingSend, written bool) {
	t.Helper()
	ctx := context.Background()
	c, err := st.Campaign(ctx, snd.campaign.AccountID, snd.campaign.Env, snd.campaign.ID)
	if !written {
		wantErr(t, name+": campaign", err, domain.ErrNotFound)
		for _, m := range snd.messages {
			_, err := st.MessageByID(ctx, m.ID)
			wantErr(t, name+": message", err, domain.ErrNotFound)
		}
		return
	}
	if err != nil || !reflect.DeepEqual(c, snd.campaign) {
		t.Errorf("%s: campaign %+v (%v), want %+v", name, c, err, snd.campaign)
	}
	for _, want := range snd.messages {
		got, err := st.Message(ctx, snd.campaign.AccountID, snd.campaign.Env, want.ID)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: message\n got %+v (%v)\nwant %+v", name, got, err, want)
		}
	}
}

// checkDebits asserts that the account's debit lines are exactly want,
// keyed by message id (ledger ids are not compared: they are random).
func checkDebits(t *testing.T, st *store.Store, accountID string, want map[string]ledger.Entry) {
	t.Helper()
	lines, err := st.Ledger(context.Background(), accountID, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ledger.Entry{}
	for _, e := range lines {
		if e.Kind != ledger.Debit {
			continue
		}
		if _, dup := got[e.MessageID]; dup {
			t.Errorf("two debit lines for message %s", e.MessageID)
		}
		e.ID = ""
		got[e.MessageID] = e
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("debit lines\n got %+v\nwant %+v", got, want)
	}
}

func TestConcurrentDebitsNeverOverdraw(t *testing.T) {
	tests := []struct {
		name      string
		balance   int64
		workers   int
		perBatch  int   // sends in each worker's batch
		costEach  int64 // charge of each send
		wantSends int
		nodes     int // processes sharing the database, each with its balance shares (0: one without)
	}{
		{"single sends", 25 * credit, 40, 1, credit, 25, 0},
		{"group commits", 25 * credit, 10, 4, credit, 25, 0},
		{"uneven costs", 10 * credit, 12, 1, 3 * credit, 3, 0},
		{"three nodes", 25 * credit, 40, 1, credit, 25, 3},
		{"three nodes, group commits, uneven", 100 * credit, 30, 3, 7 * credit, 14, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, st *store.Store, dsn string) {
				ctx := context.Background()
				acc := newAccount(t, st, tc.balance)
				nodes := []*store.Store{st}
				if tc.nodes > 0 {
					nodes = nil
					for i := 0; i < tc.nodes; i++ {
						nodes = append(nodes, storetest.OpenWith(t, dsn, store.Options{Holder: fmt.Sprintf("node-%d", i)}))
					}
				}

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
					sends := make([]pendingSend, tc.perBatch)
					for i := range sends {
						sends[i] = newSend(acc, "live", at(time.Duration(w*tc.perBatch+i)*time.Millisecond), tc.costEach, 1)
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
				total := tc.workers * tc.perBatch
				if ok.Load() != int64(tc.wantSends) || refused.Load() != int64(total-tc.wantSends) {
					t.Errorf("accepted %d, refused %d; want %d and %d", ok.Load(), refused.Load(), tc.wantSends, total-tc.wantSends)
				}
				checkBalance(t, st, acc.ID, tc.balance-int64(tc.wantSends)*tc.costEach)
				storetest.CheckUsage(t, st, acc.ID)
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
			result sendResult
		}
		results := make(chan outcome, 4*pairs)
		errs := make(chan error, 2*pairs)
		var wg sync.WaitGroup
		for p := 0; p < pairs; p++ {
			for dup := 0; dup < 2; dup++ {
				keys := []string{fmt.Sprintf("k%d", 2*p), fmt.Sprintf("k%d", 2*p+1)}
				sends := make([]pendingSend, len(keys))
				for i, k := range keys {
					created := at(time.Duration(p*10+dup*2+i) * time.Millisecond)
					sends[i] = withIdem(newSend(acc, "live", created, credit, 2), k, "hash-"+k)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := commitSendsOn(st, ctx, sends)
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
			case r.err == nil && r.replay == nil:
				accepted[o.key]++
			case r.err == nil && r.replay != nil:
				stored, err := st.Idempotency(ctx, "key_test", o.key)
				if err != nil || string(r.replay.Response) != string(stored.Response) {
					t.Errorf("%s: replayed %q, stored %q (%v)", o.key, r.replay.Response, stored.Response, err)
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
		storetest.CheckUsage(t, st, acc.ID)
	})
}

// Sends queued one at a time through a batcher that gathers each group
// when its transaction starts (Config.Late) land as they do through the
// loop that gathers first: every send answered, none beyond the balance.
func TestLateGroupsNeverOverdraw(t *testing.T) {
	for _, late := range []bool{false, true} {
		t.Run(fmt.Sprintf("late=%v", late), func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
				ctx := context.Background()
				acc := newAccount(t, st, 25*credit)
				svc := NewService(Config{Store: nil, Writer: storeWriter(st), Late: late, Now: func() time.Time { return t0 }})
				defer svc.Close()
				var ok, refused atomic.Int64
				var wg sync.WaitGroup
				errs := make(chan error, 40)
				for i := 0; i < 40; i++ {
					snd := newSend(acc, "live", at(time.Duration(i)*time.Millisecond), credit, 1)
					wg.Add(1)
					go func() {
						defer wg.Done()
						r, err := svc.commits.Do(ctx, snd)
						if err != nil {
							errs <- err
							return
						}
						tally([]sendResult{r}, &ok, &refused, errs)
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Error(err)
				}
				if ok.Load() != 25 || refused.Load() != 15 {
					t.Errorf("accepted %d, refused %d; want 25 and 15", ok.Load(), refused.Load())
				}
				checkBalance(t, st, acc.ID, 0)
				storetest.CheckUsage(t, st, acc.ID)
			})
		})
	}
}
