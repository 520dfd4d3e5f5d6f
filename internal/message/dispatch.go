package message

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"msgsvc/internal/channel/rcs"
	"msgsvc/internal/domain"
	"msgsvc/internal/provider"
)

// Claimer is what the Dispatcher needs from storage.
type Claimer interface {
	ClaimDue(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]domain.Message, error)
}

// Routes finds providers and learns how hand-overs went (provider.Router
// does; it fails routes over while a provider is down).
type Routes interface {
	Pick(env domain.Environment, channel domain.Channel, countryCode string) provider.Provider
	Report(name string, ok bool)
	// ByName finds the provider that took a message, or nil.
	ByName(name string) provider.Provider
}

// Dispatcher hands due messages to providers. Messages are claimed in
// batches under a lease, so several dispatchers, on one node or many,
// never hand the same message over twice while they live, and a dead
// one's messages come due again when its lease runs out.
type Dispatcher struct {
	store   Claimer
	routes  Routes
	tracker *Tracker
	owner   string
	lease   time.Duration
	batch   int
	workers int
	poll    time.Duration
	now     func() time.Time
	log     *slog.Logger
	wake    chan struct{}
	caps    CapabilityCache
	capTTL  time.Duration
	direct  chan domain.Message // messages leased to us at insert
	ready   chan struct{}       // messages were enqueued
	stopped atomic.Bool         // Run has returned: Enqueue takes nothing
}

// directQueue bounds the messages waiting in memory for hand-over.
const directQueue = 1 << 14

// DispatcherConfig sets up a Dispatcher.
type DispatcherConfig struct {
	Store   Claimer
	Routes  Routes
	Tracker *Tracker
	Owner   string        // unique per process, e.g. the node id
	Lease   time.Duration // default 30 s
	Batch   int           // default 256
	Workers int           // parallel claim loops, default 2
	Poll    time.Duration // idle re-check for scheduled messages and lapsed leases, default 1 s
	Now     func() time.Time
	Log     *slog.Logger
	// Capabilities caches providers' answers about RCS devices; nil uses
	// Store when it implements CapabilityCache, else nothing is cached.
	Capabilities CapabilityCache
	// CapabilityTTL is how long a cached answer is trusted (default
	// rcs.CapabilityTTL).
	CapabilityTTL time.Duration
}

// NewDispatcher builds a Dispatcher; Run starts it.
func NewDispatcher(c DispatcherConfig) *Dispatcher {
	d := &Dispatcher{store: c.Store, routes: c.Routes, tracker: c.Tracker, owner: c.Owner, lease: c.Lease,
		batch: c.Batch, workers: c.Workers, poll: c.Poll, now: c.Now, log: c.Log, wake: make(chan struct{}, 1),
		caps: c.Capabilities, capTTL: c.CapabilityTTL, direct: make(chan domain.Message, directQueue),
		ready: make(chan struct{}, 1)}
	if d.caps == nil {
		d.caps, _ = c.Store.(CapabilityCache)
	}
	if d.capTTL <= 0 {
		d.capTTL = rcs.CapabilityTTL
	}
	if d.lease <= 0 {
		d.lease = 30 * time.Second
	}
	if d.batch <= 0 {
		d.batch = 256
	}
	if d.workers <= 0 {
		d.workers = 2
	}
	if d.poll <= 0 {
		d.poll = time.Second
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.log == nil {
		d.log = slog.Default()
	}
	return d
}

// Wake tells the dispatcher that messages became due.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Enqueue hands the dispatcher messages written already leased to it (see
// DispatchHandoff), to be handed over without a claim. It returns how many
// it took; the rest do not fit the queue and stay with their lease.
func (d *Dispatcher) Enqueue(msgs []domain.Message) int {
	if d.stopped.Load() {
		return 0
	}
	n := 0
	for _, m := range msgs {
		select {
		case d.direct <- m:
			n++
		default:
			d.kick()
			return n
		}
	}
	d.kick()
	return n
}

func (d *Dispatcher) kick() {
	select {
	case d.ready <- struct{}{}:
	default:
	}
}

// Run dispatches until ctx ends. A batch already taken is finished before
// Run returns, so a graceful stop leaves nothing half-handed. Messages
// still queued in memory keep their lease; the node releases its leases
// when it stops.
func (d *Dispatcher) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i := 0; i < d.workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.loop(ctx)
		}()
	}
	wg.Wait()
	d.stopped.Store(true)
}

func (d *Dispatcher) loop(ctx context.Context) {
	// A ticker, not a timer reset on every turn: while messages keep
	// arriving in memory the loop never sleeps long, and the table (due
	// retries, scheduled messages, a dead node's lapsed leases) must still
	// be looked at every poll.
	tick := time.NewTicker(d.poll)
	defer tick.Stop()
	claimDB := true // at start: whatever is due in the table
	for ctx.Err() == nil {
		busy := false
		// Messages handed over in memory first: they are ours already.
		if msgs := d.takeDirect(); len(msgs) > 0 {
			if len(d.direct) > 0 {
				d.kick() // let another worker take the next batch
			}
			if err := d.dispatch(ctx, msgs); err != nil && ctx.Err() == nil {
				d.log.Error("dispatch", "err", err)
			}
			busy = true
		}
		select {
		case <-d.wake:
			claimDB = true
		case <-tick.C:
			claimDB = true
		default:
		}
		if claimDB {
			n, err := d.RunOnce(ctx)
			if err != nil && ctx.Err() == nil {
				d.log.Error("dispatch", "err", err)
			}
			claimDB = n == d.batch // a full batch: more may be waiting
			busy = busy || n > 0
		}
		if busy {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
			claimDB = true
		case <-tick.C:
			claimDB = true
		case <-d.ready:
		}
	}
}

// takeDirect takes up to a batch of the messages queued in memory.
func (d *Dispatcher) takeDirect() []domain.Message {
	var out []domain.Message
	for len(out) < d.batch {
		select {
		case m := <-d.direct:
			out = append(out, m)
		default:
			return out
		}
	}
	return out
}

// RunOnce claims one batch, hands it over and records the outcome. It
// returns the number of messages claimed.
func (d *Dispatcher) RunOnce(ctx context.Context) (int, error) {
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	msgs, err := d.store.ClaimDue(ctx, d.owner, d.now(), d.lease, d.batch)
	if err != nil || len(msgs) == 0 {
		return 0, err
	}
	return len(msgs), d.dispatch(ctx, msgs)
}

// dispatch hands over messages leased to this dispatcher and records the
// outcome.
func (d *Dispatcher) dispatch(ctx context.Context, msgs []domain.Message) error {
	// The lease is ours: finish even if shutdown begins.
	work := context.WithoutCancel(ctx)
	groups := map[provider.Provider][]domain.Message{}
	var reports []Report
	var rich, overdue []routed
	now := d.now().UTC()
	for _, m := range msgs {
		if !m.ExpiresAt.After(now) {
			reports = append(reports, Report{Kind: Expire, MessageID: m.ID, At: now})
			continue
		}
		if awaitingDelivery(&m) {
			overdue = append(overdue, routed{m, d.routes.ByName(m.Provider)})
			continue
		}
		p := d.routes.Pick(m.Env, m.Channel, m.CountryCode)
		if p == nil {
			reports = append(reports, Report{Kind: Rejected, MessageID: m.ID, ErrorCode: domain.CodeNoRoute, At: now, LeaseOwner: d.owner})
			continue
		}
		if m.Channel == domain.RCS {
			rich = append(rich, routed{m, p})
			continue
		}
		groups[p] = append(groups[p], m)
	}
	if len(overdue) > 0 {
		reports = append(reports, d.revoke(work, overdue, now)...)
	}
	if len(rich) > 0 {
		send, screened := d.screenRCS(work, rich, now)
		reports = append(reports, screened...)
		for _, it := range send {
			groups[it.p] = append(groups[it.p], it.m)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	for p, ms := range groups {
		wg.Add(1)
		go func(p provider.Provider, ms []domain.Message) {
			defer wg.Done()
			if err := d.handOver(work, p, ms); err != nil {
				mu.Lock()
				firstErr = cmp.Or(firstErr, err)
				mu.Unlock()
			}
		}(p, ms)
	}
	wg.Wait()
	if err := d.tracker.Apply(work, reports); err != nil {
		return err
	}
	for _, r := range reports {
		if r.Kind == Fallback || r.Kind == Revoked {
			d.Wake() // the fallback SMS are due now
			break
		}
	}
	return firstErr
}

// handOver submits messages to a provider, in chunks when it asks for
// them. A chunk's outcome is recorded while the next one is handed over,
// so at most two chunks are ever acknowledged by the provider and not yet
// recorded here.
func (d *Dispatcher) handOver(ctx context.Context, p provider.Provider, msgs []domain.Message) error {
	size := len(msgs)
	if n := provider.CapabilitiesOf(p).ChunkSize(); n > 0 {
		size = n
	}
	var recording chan error
	wait := func() error {
		if recording == nil {
			return nil
		}
		return <-recording
	}
	for start := 0; start < len(msgs); start += size {
		out := d.submit(ctx, p, msgs[start:min(start+size, len(msgs))])
		if err := wait(); err != nil {
			return err
		}
		recording = make(chan error, 1)
		go func() { recording <- d.tracker.Apply(ctx, out) }()
	}
	return wait()
}

func (d *Dispatcher) submit(ctx context.Context, p provider.Provider, msgs []domain.Message) []Report {
	outs := make([]provider.Outbound, len(msgs))
	for i, m := range msgs {
		outs[i] = outbound(m)
	}
	// A hand-over must end well inside the lease, or another node could
	// claim the messages while this one is still handing them over.
	sctx, cancel := context.WithTimeout(ctx, d.lease/2)
	results := p.Submit(sctx, outs)
	cancel()
	d.routes.Report(p.Name(), handedOver(results, len(msgs)))
	now := d.now().UTC()
	reports := make([]Report, len(msgs))
	for i, m := range msgs {
		r := Report{MessageID: m.ID, Provider: p.Name(), At: now, LeaseOwner: d.owner}
		var res provider.Result
		if i < len(results) {
			res = results[i]
		} else {
			res.Err = &provider.Error{Code: domain.CodeProviderError, Message: "no answer from provider", Temporary: true}
		}
		switch {
		case res.Err == nil:
			r.Kind, r.Ref, r.Parts, r.FallbackAt = Accepted, res.Ref, res.Parts, res.FallbackAt
		case res.Err.Temporary:
			r.Kind, r.ErrorCode, r.ErrorMessage = Retry, res.Err.Code, res.Err.Message
			r.RetryAt = now.Add(retryDelay(m.Attempts))
			if !r.RetryAt.Before(m.ExpiresAt) {
				r.Kind, r.ErrorCode, r.ErrorMessage = Expire, domain.CodeExpired, ""
			}
		case res.Err.Code == domain.CodeRCSNotSupported && m.Channel == domain.RCS:
			// The provider knew better than the cache, or could not be asked.
			d.remember(ctx, m.Env, map[string]bool{m.To: false}, now)
			r = d.notCapable(routed{m, p}, now)
			if r.Kind == Rejected {
				r.ErrorMessage = res.Err.Message
			}
		default:
			r.Kind, r.ErrorCode, r.ErrorMessage = Rejected, res.Err.Code, res.Err.Message
		}
		reports[i] = r
	}
	return reports
}

// handedOver reports whether a provider was reachable and willing: every
// message got an answer, and none was a temporary failure (down, timed
// out, throttled). A refusal of one message for its own sake (a bad
// number) says nothing against the provider.
func handedOver(results []provider.Result, n int) bool {
	if len(results) < n {
		return false
	}
	for _, r := range results {
		if r.Err != nil && r.Err.Temporary {
			return false
		}
	}
	return true
}

// retryDelay spaces out hand-over retries: 5 s, 30 s, 2 min, then every
// 10 min until the validity ends.
func retryDelay(attempts int) time.Duration {
	switch {
	case attempts <= 1:
		return 5 * time.Second
	case attempts == 2:
		return 30 * time.Second
	case attempts == 3:
		return 2 * time.Minute
	}
	return 10 * time.Minute
}
