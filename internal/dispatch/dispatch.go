// Package dispatch hands due messages to providers: it claims them from
// the messages table (a lease queue) or takes them from this node's sends in
// memory, routes each (failing over while a provider is down, screening RCS
// devices, taking back RCS messages that were not delivered in time) and
// records every outcome as a report through tracking.
package dispatch

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/msgsvc/msgsvc/internal/channel/rcs"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/lease"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/tracking"
)

// Recorder records the outcome of hand-overs (tracking.Tracker does): it
// returns once the reports are committed.
type Recorder interface {
	Apply(ctx context.Context, reports []tracking.Report) error
}

// Claimer is the table of messages waiting for a provider.
type Claimer interface {
	ClaimDue(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]domain.Message, error)
	ReleaseMessages(ctx context.Context, owner string, ids []string, now time.Time) error
	// RenewMessages extends to now+lease the owner's lease on messages it
	// still holds (held maps each id to the lease's end as last written)
	// and returns the ids renewed.
	RenewMessages(ctx context.Context, owner string, held map[string]time.Time, now time.Time, lease time.Duration) ([]string, error)
}

// Routes finds providers and learns how hand-overs went (provider.Router
// does; it fails routes over while a provider is down).
type Routes interface {
	Pick(env domain.Environment, channel domain.Channel, countryCode string) provider.Provider
	// ChooseFor decides where a message goes knowing all of it (its
	// account, sender, destination and price) and what the hand-over
	// will cost: a provider that would send it from its own sender, which
	// usable refuses, is not eligible; no provider is NO_ROUTE.
	ChooseFor(m *domain.Message, usable func(sender string) bool) provider.Decision
	Report(name string, ok bool)
	// ByName finds the provider that took a message, or nil.
	ByName(name string) provider.Provider
}

// QueueConfig sets up the queue of messages waiting for a provider.
type QueueConfig struct {
	Store   Claimer
	Owner   string        // unique per process, e.g. the node id
	Lease   time.Duration // default 30 s
	Batch   int           // default 256
	Workers int           // batches handed over at once, default 2
	Poll    time.Duration // idle re-check for scheduled messages and lapsed leases, default 1 s
	Now     func() time.Time
	Log     *slog.Logger
}

// NewDispatchQueue builds the lease queue of messages waiting for a
// provider: the messages table, claimed by ClaimDue, and the messages a
// send wrote already leased to this node, handed over in memory. A
// Dispatcher serves it.
func NewDispatchQueue(c QueueConfig) *lease.Queue[domain.Message] {
	if c.Workers <= 0 {
		c.Workers = 2
	}
	return lease.New(lease.Config[domain.Message]{Name: "messages", Owner: c.Owner, Lease: c.Lease,
		Claim: c.Store.ClaimDue, Release: c.Store.ReleaseMessages, ID: func(m domain.Message) string { return m.ID },
		Until: func(m domain.Message) time.Time { return m.NextAttemptAt },
		Batch: c.Batch, Workers: c.Workers, Poll: c.Poll, Now: c.Now, Log: c.Log})
}

// Dispatcher hands due messages to providers. Messages are claimed in
// batches under a lease, so several dispatchers, on one node or many,
// never hand the same message over twice while they live, and a dead
// one's messages come due again when its lease runs out.
type Dispatcher struct {
	queue   *lease.Queue[domain.Message]
	store   Claimer
	routes  Routes
	tracker Recorder
	owner   string
	lease   time.Duration
	now     func() time.Time
	log     *slog.Logger
	caps    CapabilityCache
	capTTL  time.Duration
	holders SenderHolders
	// places holds a place for each chunk handed to a provider, from
	// before it goes until its outcome is recorded: two a worker, so a
	// crash leaves no more acknowledged and unrecorded than that, now
	// that a worker goes on to its next batch while its last one is
	// recorded (Run). recording counts the batches left recording
	// behind their worker, so that Run returns only when all are.
	places    chan struct{}
	recording sync.WaitGroup
}

// DispatcherConfig sets up a Dispatcher.
type DispatcherConfig struct {
	// Queue is the queue the dispatcher serves; nil makes one with
	// NewDispatchQueue from Store, Owner, Lease, Batch, Workers, Poll, Now
	// and Log.
	Queue   *lease.Queue[domain.Message]
	Store   Claimer
	Routes  Routes
	Tracker Recorder
	// Owner, Lease, Batch, Workers and Poll make the queue when Queue is
	// nil (see QueueConfig).
	Owner   string
	Lease   time.Duration
	Batch   int
	Workers int
	Poll    time.Duration
	Now     func() time.Time
	Log     *slog.Logger
	// Capabilities caches providers' answers about RCS devices; nil uses
	// Store when it implements CapabilityCache, else nothing is cached.
	Capabilities CapabilityCache
	// CapabilityTTL is how long a cached answer is trusted (default
	// rcs.CapabilityTTL).
	CapabilityTTL time.Duration
	// Holders tells which account holds a provider's own sender; nil uses
	// Store when it implements SenderHolders, else every provider's own
	// sender is taken as held by nobody.
	Holders SenderHolders
}

// NewDispatcher builds a Dispatcher; Run starts it.
func NewDispatcher(c DispatcherConfig) *Dispatcher {
	if c.Queue == nil {
		c.Queue = NewDispatchQueue(QueueConfig{Store: c.Store, Owner: c.Owner, Lease: c.Lease, Batch: c.Batch,
			Workers: c.Workers, Poll: c.Poll, Now: c.Now, Log: c.Log})
	}
	d := &Dispatcher{queue: c.Queue, store: c.Store, routes: c.Routes, tracker: c.Tracker, owner: c.Queue.Owner(), lease: c.Queue.Lease(),
		now: c.Now, log: c.Log, caps: c.Capabilities, capTTL: c.CapabilityTTL, holders: c.Holders,
		places: make(chan struct{}, 2*c.Queue.Workers())}
	if d.caps == nil {
		d.caps, _ = c.Store.(CapabilityCache)
	}
	if d.holders == nil {
		d.holders, _ = c.Store.(SenderHolders)
	}
	if d.capTTL <= 0 {
		d.capTTL = rcs.CapabilityTTL
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.log == nil {
		d.log = slog.Default()
	}
	return d
}

// Queue is the queue the dispatcher serves.
func (d *Dispatcher) Queue() *lease.Queue[domain.Message] { return d.queue }

// Run dispatches until ctx ends. A worker goes on to its next batch as
// soon as the provider has answered for the last one, while that
// batch's outcome is still being recorded: a worker that waited for the
// write as well would leave the provider idle, and the messages
// arriving meanwhile waiting in memory, for a whole commit. The workers
// still have no more than two chunks each handed over and not recorded,
// as when a worker records a chunk while it hands over the next of the
// same batch (handOver). A batch already taken is finished, and every
// outcome recorded, before Run returns, so a graceful stop leaves
// nothing half-handed; messages still waiting in memory go back to the
// table.
func (d *Dispatcher) Run(ctx context.Context) {
	d.queue.Run(ctx, func(ctx context.Context, msgs []domain.Message) error {
		return d.dispatch(ctx, msgs, true)
	})
	d.recording.Wait()
}

// RunOnce claims one batch, hands it over and records the outcome. It
// returns the number of messages claimed.
func (d *Dispatcher) RunOnce(ctx context.Context) (int, error) {
	return d.queue.ClaimOnce(ctx, func(ctx context.Context, msgs []domain.Message) error {
		return d.dispatch(ctx, msgs, false)
	})
}

// dispatch hands over messages leased to this dispatcher and records the
// outcome. With ahead, it returns once the providers have answered, and
// the recording of what they answered last goes on behind it (see Run).
func (d *Dispatcher) dispatch(ctx context.Context, msgs []domain.Message, ahead bool) error {
	// The lease is ours: finish even if shutdown begins.
	work := context.WithoutCancel(ctx)
	now := d.now().UTC()
	b := d.route(work, msgs, now)
	h := d.holdBatch(b)
	stopHeartbeat := h.heartbeat(work)
	groups, reports := b.groups, b.reports
	if overdue := b.overdue; len(overdue) > 0 {
		reports = append(reports, d.revoke(work, overdue, now)...)
	}
	if rich := b.rich; len(rich) > 0 {
		send, screened := d.screenRCS(work, rich, now)
		reports = append(reports, screened...)
		for _, it := range send {
			groups[it.p] = append(groups[it.p], it.m)
		}
	}
	var mu sync.Mutex
	var firstErr error
	var lasts []<-chan error
	hand := func(p provider.Provider, ms []domain.Message) {
		last, err := d.handOver(work, h, p, ms, map[provider.Provider]bool{p: true})
		mu.Lock()
		defer mu.Unlock()
		firstErr = cmp.Or(firstErr, err)
		if last != nil {
			lasts = append(lasts, last)
		}
	}
	// Each provider's hand-over runs on a goroutine of its own, so that a
	// slow provider holds up no other. A batch for one provider, the usual
	// one, is handed over on the worker's own goroutine: a new one grew
	// its stack again through the hand-over's calls, about 1 % of a node's
	// CPU at C=8.
	if len(groups) == 1 {
		for p, ms := range groups {
			hand(p, ms)
		}
	} else {
		var wg sync.WaitGroup
		for p, ms := range groups {
			wg.Go(func() { hand(p, ms) })
		}
		wg.Wait()
	}
	finish := func() error {
		// The heartbeat keeps the lease of what is still being recorded.
		for _, last := range lasts {
			firstErr = cmp.Or(firstErr, <-last)
		}
		// What is left is recorded now, well inside the lease the
		// heartbeat kept; renewing it meanwhile would only race the record.
		stopHeartbeat()
		if err := d.tracker.Apply(work, reports); err != nil {
			return err
		}
		for _, r := range reports {
			if r.Kind == tracking.Fallback || r.Kind == tracking.Revoked {
				d.queue.Wake() // the fallback SMS are due now
				break
			}
		}
		return cmp.Or(firstErr, b.err)
	}
	if !ahead || len(lasts) == 0 {
		return finish()
	}
	d.recording.Add(1)
	go func() {
		defer d.recording.Done()
		if err := finish(); err != nil {
			d.log.Error("handle messages", "err", err)
		}
	}()
	return nil
}

// sorted is a claimed batch sorted by what happens next to each message.
type sorted struct {
	groups  map[provider.Provider][]domain.Message // handed over now, by provider
	reports []tracking.Report                      // ended without a hand-over (expired, no route)
	rich    []routed                               // RCS, screened for capable devices first
	overdue []routed                               // awaiting delivery too long: taken back
	// err is why some messages could not be routed; they are left to their
	// lease and come due again when it lapses.
	err error
}

// route sorts a batch, choosing each message's provider.
func (d *Dispatcher) route(ctx context.Context, msgs []domain.Message, now time.Time) sorted {
	b := sorted{groups: map[provider.Provider][]domain.Message{}}
	held := d.heldSenders()
	// By index: a copy per iteration would escape through pick's pointer,
	// one heap message per message dispatched.
	for i := range msgs {
		m := &msgs[i]
		if !m.ExpiresAt.After(now) {
			b.reports = append(b.reports, tracking.Report{Kind: tracking.Expire, MessageID: m.ID, At: now})
			continue
		}
		if tracking.AwaitingDelivery(m) {
			b.overdue = append(b.overdue, routed{*m, d.routes.ByName(m.Provider)})
			continue
		}
		p, reason, err := d.pick(ctx, held, m)
		switch {
		case err != nil:
			b.err = cmp.Or(b.err, err)
		case p == nil:
			b.reports = append(b.reports, tracking.Report{Kind: tracking.Rejected, MessageID: m.ID, ErrorCode: domain.CodeNoRoute,
				ErrorMessage: reason, At: now, LeaseOwner: d.owner, Route: m.Route})
		case m.Channel == domain.RCS:
			b.rich = append(b.rich, routed{*m, p})
		default:
			g := b.groups[p]
			if g == nil {
				g = make([]domain.Message, 0, len(msgs)-i) // most batches go to one provider
			}
			b.groups[p] = append(g, *m)
		}
	}
	return b
}

// handOver submits messages to a provider, in chunks when it asks for
// them. A chunk's outcome is recorded while the next one is handed over.
// The last chunk's recording is returned still under way (last; nil when
// nothing was handed over): the caller waits for it, or lets it finish
// while the worker hands over its next batch (Run). A chunk waits for a
// place (Dispatcher.places) before it goes, so that at most two chunks a
// worker are acknowledged by the provider and not yet recorded here. A
// chunk goes only while the batch's lease on it runs (h renews it). When
// a chunk finds the provider down, what is left goes back through
// routing: once the provider's breaker is open the route's next provider
// takes it, rather than the rest of the batch waiting on a provider that
// is gone. tried are the providers this batch has gone to, which a
// re-route does not go back to.
func (d *Dispatcher) handOver(ctx context.Context, h *hold, p provider.Provider, msgs []domain.Message,
	tried map[provider.Provider]bool) (last <-chan error, _ error) {
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
	var moved map[provider.Provider][]domain.Message
	for start := 0; start < len(msgs); start += size {
		chunk := h.ready(ctx, msgs[start:min(start+size, len(msgs))])
		if len(chunk) == 0 {
			continue
		}
		d.places <- struct{}{}
		out, ok := d.submit(ctx, p, chunk)
		h.handed(chunk)
		if err := wait(); err != nil {
			<-d.places
			return nil, err
		}
		recording = make(chan error, 1)
		go func() {
			err := d.tracker.Apply(ctx, out)
			h.done(chunk)
			<-d.places
			recording <- err
		}()
		if rest := msgs[min(start+size, len(msgs)):]; !ok && len(rest) > 0 {
			var stay []domain.Message
			stay, moved = d.reroute(ctx, p, rest, tried, moved)
			msgs = append(msgs[:start+size:start+size], stay...)
		}
	}
	if len(moved) == 0 {
		return recording, nil
	}
	err := wait()
	for q, ms := range moved {
		tried[q] = true
		last, e := d.handOver(ctx, h, q, ms, tried)
		err = cmp.Or(err, e)
		if last != nil {
			err = cmp.Or(err, <-last)
		}
	}
	return nil, err
}

// reroute sends what is left of a batch for p back through routing after
// p failed a hand-over. Messages routing now gives to a provider the batch
// has not tried (p's breaker opened) are added to moved, by provider, with
// the route now taken; the others stay with p and are returned.
func (d *Dispatcher) reroute(ctx context.Context, p provider.Provider, rest []domain.Message, tried map[provider.Provider]bool,
	moved map[provider.Provider][]domain.Message) (stay []domain.Message, _ map[provider.Provider][]domain.Message) {
	held := d.heldSenders()
	for i := range rest {
		m := rest[i]
		q, _, err := d.pick(ctx, held, &m)
		if err != nil || q == nil || q == p || tried[q] {
			stay = append(stay, rest[i])
			continue
		}
		if moved == nil {
			moved = map[provider.Provider][]domain.Message{}
		}
		moved[q] = append(moved[q], m)
	}
	if n := len(rest) - len(stay); n > 0 {
		d.log.Warn("provider down: the rest of a batch re-routed", "provider", p.Name(), "messages", n)
	}
	return stay, moved
}

// submit hands msgs to p and returns the reports of their outcome, and
// whether p was reachable and willing (see handedOver).
func (d *Dispatcher) submit(ctx context.Context, p provider.Provider, msgs []domain.Message) ([]tracking.Report, bool) {
	outs := make([]provider.Outbound, len(msgs))
	for i, m := range msgs {
		outs[i] = outbound(m)
	}
	// A hand-over must end well inside the lease, or another node could
	// claim the messages while this one is still handing them over.
	sctx, cancel := context.WithTimeout(ctx, d.lease/2)
	results := p.Submit(sctx, outs)
	cancel()
	ok := handedOver(results, len(msgs))
	d.routes.Report(p.Name(), ok)
	now := d.now().UTC()
	reports := make([]tracking.Report, len(msgs))
	for i, m := range msgs {
		r := tracking.Report{MessageID: m.ID, Provider: p.Name(), At: now, LeaseOwner: d.owner, Route: m.Route, Cost: m.Cost,
			Currency: m.CostCurrency}
		var res provider.Result
		if i < len(results) {
			res = results[i]
		} else {
			res.Err = &provider.Error{Code: domain.CodeProviderError, Message: "no answer from provider", Temporary: true}
		}
		switch {
		case res.Err == nil:
			r.Kind, r.Ref, r.Parts, r.FallbackAt = tracking.Accepted, res.Ref, res.Parts, res.FallbackAt
		case res.Err.Temporary:
			r.Kind, r.ErrorCode, r.ErrorMessage = tracking.Retry, res.Err.Code, res.Err.Message
			r.RetryAt = now.Add(retryDelay(m.Attempts))
			if !r.RetryAt.Before(m.ExpiresAt) {
				r.Kind, r.ErrorCode, r.ErrorMessage = tracking.Expire, domain.CodeExpired, ""
			}
		case res.Err.Code == domain.CodeRCSNotSupported && m.Channel == domain.RCS:
			// The provider knew better than the cache, or could not be asked.
			d.remember(ctx, m.Env, map[string]bool{m.To: false}, now)
			r = d.notCapable(routed{m, p}, now)
			if r.Kind == tracking.Rejected {
				r.ErrorMessage = res.Err.Message
			}
		default:
			r.Kind, r.ErrorCode, r.ErrorMessage = tracking.Rejected, res.Err.Code, res.Err.Message
		}
		reports[i] = r
	}
	d.logRetries(p, reports)
	return reports, ok
}

// logRetries tells the operator when a provider failed a hand-over for
// now (down, timed out, throttled): the messages are claimed again for
// the retry, so without this line a slow provider shows only as late
// messages.
func (d *Dispatcher) logRetries(p provider.Provider, reports []tracking.Report) {
	n, first := 0, -1
	for i, r := range reports {
		if r.Kind == tracking.Retry {
			n++
			if first < 0 {
				first = i
			}
		}
	}
	if n == 0 {
		return
	}
	r := reports[first]
	d.log.Warn("hand-over failed for now; the messages are retried", "provider", p.Name(), "messages", n,
		"code", r.ErrorCode, "err", r.ErrorMessage, "retryAt", r.RetryAt)
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
