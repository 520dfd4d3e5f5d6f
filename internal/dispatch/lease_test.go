package dispatch

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/intake/intaketest"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// countingCarrier is a provider that counts every message it took. It can
// be slow (one hand-over at a time, each holding it for per, as a carrier
// capped in messages per second) and down for a while from the first
// hand-over it sees (a hand-over waits for it, as the SMPP client waits for
// a bind, until the hand-over's deadline, then fails as temporary). The
// outage starts with the traffic, not with the test, so that a slow
// machine that takes long to queue the messages still sees it.
type countingCarrier struct {
	name  string
	chunk int
	per   time.Duration
	line  chan struct{} // one hand-over at a time

	mu        sync.Mutex
	outage    time.Duration // down this long from the first hand-over
	downUntil time.Time
	took      map[string]int // message id → times taken
}

func newCountingCarrier(name string, chunk int, per time.Duration) *countingCarrier {
	return &countingCarrier{name: name, chunk: chunk, per: per, line: make(chan struct{}, 1), took: map[string]int{}}
}

func (c *countingCarrier) Name() string       { return c.name }
func (c *countingCarrier) HandOverChunk() int { return c.chunk }

func (c *countingCarrier) down(outage time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outage = outage
}

func (c *countingCarrier) Submit(ctx context.Context, msgs []provider.Outbound) []provider.Result {
	out := make([]provider.Result, len(msgs))
	fail := func() []provider.Result {
		for i := range out {
			out[i].Err = &provider.Error{Code: domain.CodeProviderError, Message: "carrier unreachable", Temporary: true}
		}
		return out
	}
	c.mu.Lock()
	if c.outage > 0 && c.downUntil.IsZero() {
		c.downUntil = time.Now().Add(c.outage)
	}
	back := c.downUntil
	c.mu.Unlock()
	if wait := time.Until(back); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return fail()
		}
	}
	select {
	case c.line <- struct{}{}:
	case <-ctx.Done():
		return fail()
	}
	defer func() { <-c.line }()
	// The carrier's pace: it takes this chunk in per, whatever the caller's deadline.
	time.Sleep(c.per)
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, m := range msgs {
		c.took[m.ID]++
		out[i].Ref = c.name + "-" + m.ID
	}
	return out
}

func (c *countingCarrier) taken() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.took))
	for id, n := range c.took {
		out[id] = n
	}
	return out
}

// TestBacklogBeyondLeaseSentOnce holds a dispatch backlog for longer than
// the lease (a slow carrier, an outage of twice the lease, and both with a
// failover route) while the queue's poll claims whatever lease lapses: no
// message may reach a carrier twice, nor both carriers, and each sent
// message records the carrier that took it.
func TestBacklogBeyondLeaseSentOnce(t *testing.T) {
	const lease = time.Second
	const n = 600
	cases := []struct {
		name     string
		per      time.Duration // the primary's time per chunk of 40
		outage   time.Duration // the primary is down this long from its first hand-over
		failover bool          // a secondary behind the primary
	}{
		{name: "slow carrier", per: 130 * time.Millisecond},
		{name: "outage of twice the lease", per: 5 * time.Millisecond, outage: 2 * lease},
		{name: "slow carrier and outage with failover", per: 130 * time.Millisecond, outage: 2 * lease, failover: true},
	}
	for _, dialect := range storetest.Dialects() {
		t.Run(dialect, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					st := storetest.Open(t, storetest.Migrated(t, dialect))
					primary := newCountingCarrier("carrier-a", 40, c.per)
					carriers := []*countingCarrier{primary}
					var routes routesPicker = fakeRoutes{domain.SMS: primary}
					if c.failover {
						secondary := newCountingCarrier("carrier-b", 40, c.per)
						carriers = append(carriers, secondary)
						r := provider.NewRouter(nil, []provider.Route{{Name: "sms", Channel: domain.SMS, Primary: primary, Secondary: secondary}})
						r.Tune(primary.Name(), provider.BreakerSettings{Failures: 2, Cooldown: time.Minute})
						routes = r
					}
					f := newFixtureOn(t, st, routes, "", false)
					ctx := context.Background()
					if _, err := creditAccount(ctx, st, f.caller.Account.ID, 10*n*ledger.Micro, ledger.TopUp, ""); err != nil {
						t.Fatal(err)
					}
					quiet := quietLog()
					tracker := newTracker(st, nil, 0)
					t.Cleanup(tracker.Close)
					q := NewDispatchQueue(QueueConfig{Store: st, Owner: "node-1", Lease: lease, Batch: 256, Workers: 2,
						Poll: 20 * time.Millisecond, Log: quiet})
					disp := NewDispatcher(DispatcherConfig{Queue: q, Store: st, Routes: routes, Tracker: tracker, Log: quiet})
					svc := intaketest.New(intaketest.Config{Store: st, Picker: routes, AllowPrivateCallbacks: true, Dispatch: q})
					t.Cleanup(svc.Close)

					if c.outage > 0 {
						primary.down(c.outage)
					}
					runCtx, stop := context.WithCancel(ctx)
					ran := make(chan struct{})
					go func() { defer close(ran); disp.Run(runCtx) }()
					defer func() { stop(); <-ran }()
					for b := 0; b < n/100; b++ {
						to := make([]string, 100)
						for i := range to {
							to[i] = fmt.Sprintf("551199%07d", b*100+i)
						}
						if _, err := svc.Send(ctx, f.caller, intaketest.Draft{Recipients: to, Text: "hi", Type: "SMS"}, intake.SendOptions{}); err != nil {
							t.Fatal(err)
						}
					}

					// Done when no message is held under a lease any more:
					// each was taken, or waits for its retry.
					deadline := time.Now().Add(60 * time.Second)
					for {
						msgs, err := st.SearchMessages(ctx, domain.MessageFilter{AccountID: f.caller.Account.ID, Limit: 1001})
						if err != nil {
							t.Fatal(err)
						}
						held := 0
						for _, m := range msgs {
							if m.Status == domain.Sending && m.LeaseOwner != "" {
								held++
							}
						}
						if len(msgs) == n && held == 0 {
							break
						}
						if time.Now().After(deadline) {
							t.Fatalf("%d of %d messages still held under a lease", held, len(msgs))
						}
						time.Sleep(20 * time.Millisecond)
					}
					stop()
					<-ran

					by := map[string]string{} // message id → the carrier that took it
					twice, both, took := 0, 0, 0
					for _, cr := range carriers {
						for id, k := range cr.taken() {
							took++
							if k > 1 {
								twice++
							}
							if other, ok := by[id]; ok && other != cr.Name() {
								both++
							}
							by[id] = cr.Name()
						}
					}
					if twice > 0 || both > 0 {
						t.Fatalf("%d messages submitted twice to a carrier, %d to both carriers (of %d taken)", twice, both, took)
					}
					if took == 0 {
						t.Fatal("no carrier took anything")
					}
					msgs, err := st.SearchMessages(ctx, domain.MessageFilter{AccountID: f.caller.Account.ID, Limit: 1001})
					if err != nil {
						t.Fatal(err)
					}
					sent := 0
					for _, m := range msgs {
						switch {
						case m.Status == domain.Sending:
							if _, ok := by[m.ID]; ok {
								t.Errorf("message %s taken by %s but recorded as waiting for a retry", m.ID, by[m.ID])
							}
						case by[m.ID] != m.Provider:
							t.Errorf("message %s (%s) records provider %q, taken by %q", m.ID, m.Status, m.Provider, by[m.ID])
						default:
							sent++
						}
					}
					if c.failover && len(carriers[1].taken()) == 0 {
						t.Errorf("the secondary took nothing while the primary was down")
					}
					t.Logf("%d taken, %d recorded sent, %d waiting for a retry", took, sent, len(msgs)-sent)
				})
			}
		})
	}
}
