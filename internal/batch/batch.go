// Package batch groups concurrent requests into one call: group commit. A
// caller hands in one item and waits; one loop takes everything that queued
// up while the previous call ran and hands it over at once. Under light load
// a batch is one item and adds no delay; under heavy load batches grow by
// themselves, which is what makes one SQLite writer fast.
package batch

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// ErrClosed is returned to callers after Close.
var ErrClosed = errors.New("batcher closed")

// Func processes a batch; it returns one result per item, in order, or an
// error for the whole batch.
type Func[T, R any] func(ctx context.Context, items []T) ([]R, error)

type call[T, R any] struct {
	item T
	at   time.Time // when Do queued it, for the queue wait
	// patient: its caller can wait a little (Patient, DoSoon), and its
	// group may linger for company.
	patient bool
	done    chan outcome[R]
}

type outcome[R any] struct {
	r   R
	err error
}

// Batcher runs Func on groups of items from concurrent callers.
type Batcher[T, R any] struct {
	fn    Func[T, R]
	max   int
	in    chan call[T, R]
	quit  chan struct{}
	ended chan struct{}
	now   func() time.Time
	stats counters
	// soon holds the items of DoSoon, which join the next group a loop
	// takes; kick starts a group for them once the first has waited its
	// time, which armed says is scheduled (nil channels for NewLate).
	soon  chan call[T, R]
	kick  chan struct{}
	armed atomic.Bool
	// after, linger and company: see Linger; hold and open: see Hold
	// (open counts the groups of NewLate opened and not yet answered).
	after   func(time.Duration) <-chan time.Time
	linger  time.Duration
	company int
	hold    time.Duration
	open    atomic.Int32
}

// Option tunes New and NewLate.
type Option func(*options)

type options struct {
	now     func() time.Time
	after   func(time.Duration) <-chan time.Time
	linger  time.Duration
	company int
	hold    time.Duration
}

func newOptions(opts []Option) options {
	o := options{now: time.Now, after: time.After}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Clock sets the clock the batcher times its cycle with (default
// time.Now).
func Clock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// Timer sets how the batcher waits for Linger and Hold (default
// time.After); tests fire the waits themselves.
func Timer(after func(time.Duration) <-chan time.Time) Option {
	return func(o *options) { o.after = after }
}

// Linger makes a loop of New whose group holds only patient items
// (Patient, DoSoon) gather for up to d, until the group has company items,
// before it runs it. Each group costs its function's fixed part (for a
// writer: a transaction, its commit and its sync) whatever it holds, so a
// short wait buys fewer, fuller groups. A group with an item whose caller
// is waiting for it (a request) runs at once: a lone client's requests,
// one after another, never wait for company that is not coming.
func Linger(d time.Duration, company int) Option {
	return func(o *options) { o.linger, o.company = d, company }
}

// patientKey marks a context whose writes can wait a little.
type patientKey struct{}

// Patient marks ctx: an item queued with it may wait for company
// (Linger). The groups of a NewLate batcher with Hold run their function
// with a patient context.
func Patient(ctx context.Context) context.Context {
	return context.WithValue(ctx, patientKey{}, true)
}

// Hold makes a group of NewLate that opens while an earlier group of the
// same batcher is still under way wait d before it queues its function,
// gathering what arrives meanwhile. Behind a writer that runs one
// transaction at a time, a level whose items trickle in (one receipt, then
// another) otherwise queues a small group at every transaction; under
// load the wait trades a few milliseconds of latency for fewer groups and
// fewer statements. A group that opens while none is under way queues at
// once.
func Hold(d time.Duration) Option { return func(o *options) { o.hold = d } }

// New starts a batcher with `workers` loops, each taking up to max items per
// call. One worker is right for SQLite; PostgreSQL gains from a few.
func New[T, R any](fn Func[T, R], max, workers int, opts ...Option) *Batcher[T, R] {
	o := newOptions(opts)
	b := &Batcher[T, R]{fn: fn, max: max, in: make(chan call[T, R], max*workers), quit: make(chan struct{}), ended: make(chan struct{}),
		now: o.now, soon: make(chan call[T, R], max*workers), kick: make(chan struct{}, 1),
		after: o.after, linger: o.linger, company: min(o.company, max)}
	done := make(chan struct{}, workers)
	for i := 0; i < workers; i++ {
		go func() { b.loop(i); done <- struct{}{} }()
	}
	go func() {
		for i := 0; i < workers; i++ {
			<-done
		}
		close(b.ended)
	}()
	return b
}

// Do queues item and waits for its result. If ctx ends while waiting, Do
// returns ctx's error, but the item may still be processed: callers must
// treat that as "unknown", as with any timed-out write.
func (b *Batcher[T, R]) Do(ctx context.Context, item T) (R, error) {
	return b.do(ctx, item, b.in, 0)
}

// DoSoon is Do for an item that need not start a group of its own: it
// joins the next group a loop takes for other items, and only if none is
// taken within wait does a group start for it (and for whatever else
// waits by then). The wait runs from the first item that waits, so the
// callers of one batcher give the same wait. An item that can wait a little, and rides with the
// others, saves the group it would cost alone. A NewLate batcher runs it
// as Do.
func (b *Batcher[T, R]) DoSoon(ctx context.Context, item T, wait time.Duration) (R, error) {
	if b.soon == nil {
		return b.Do(ctx, item)
	}
	return b.do(ctx, item, b.soon, wait)
}

func (b *Batcher[T, R]) do(ctx context.Context, item T, in chan call[T, R], wait time.Duration) (R, error) {
	c := call[T, R]{item: item, done: make(chan outcome[R], 1), patient: in == b.soon || ctx.Value(patientKey{}) != nil}
	if in == b.in {
		c.at = b.now() // an item of DoSoon waits by choice: not counted as queued
	}
	var zero R
	select {
	case <-b.quit:
		return zero, ErrClosed
	default:
	}
	select {
	case in <- c:
	case <-b.quit:
		return zero, ErrClosed
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	if in == b.soon && b.armed.CompareAndSwap(false, true) {
		time.AfterFunc(wait, func() { signal(b.kick) })
	}
	select {
	case o := <-c.done:
		return o.r, o.err
	case <-b.ended:
		// Closed while queued: a loop may still have answered just before.
		select {
		case o := <-c.done:
			return o.r, o.err
		default:
			return zero, ErrClosed
		}
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// workerKey carries the index of the loop running a batch.
type workerKey struct{}

// Worker tells which of the batcher's loops (0 to workers-1) runs the batch
// whose context this is: a loop runs one batch at a time, so per-loop
// resources need no locks.
func Worker(ctx context.Context) int {
	i, _ := ctx.Value(workerKey{}).(int)
	return i
}

func (b *Batcher[T, R]) loop(worker int) {
	ctx := context.WithValue(context.Background(), workerKey{}, worker)
	calls := make([]call[T, R], 0, b.max)
	items := make([]T, 0, b.max)
	for {
		calls, items = calls[:0], items[:0]
		waiting := b.now()
		select {
		case c := <-b.in:
			calls = append(calls, c)
		case <-b.kick: // items of DoSoon waited their time
		case <-b.quit:
			return
		}
		taken := b.now()
		calls = b.takeSoon(b.drain(b.in, calls))
		if len(calls) < b.company && patient(calls) {
			calls = b.takeSoon(b.lingerFor(calls))
		}
		if len(calls) == 0 {
			continue // a kick for items another loop took
		}
		var queued time.Duration
		for _, c := range calls {
			items = append(items, c.item)
			if !c.at.IsZero() {
				queued += taken.Sub(c.at)
			}
		}
		started := b.now()
		// The batch runs to completion even during shutdown: its callers
		// are waiting for an answer, and a half-known outcome helps nobody.
		results, err := b.fn(ctx, items)
		ran := b.now()
		answer(calls, results, err)
		b.stats.add(len(calls), queued, taken.Sub(waiting), started.Sub(taken), ran.Sub(started), b.now().Sub(ran))
	}
}

// patient tells whether every item of a group can wait.
func patient[T, R any](calls []call[T, R]) bool {
	for _, c := range calls {
		if !c.patient {
			return false
		}
	}
	return len(calls) > 0
}

// lingerFor adds to a group the items that arrive within the linger,
// until it has company; it stops at once when an impatient item joins.
func (b *Batcher[T, R]) lingerFor(calls []call[T, R]) []call[T, R] {
	timeout := b.after(b.linger)
	for len(calls) < b.company {
		select {
		case c := <-b.in:
			calls = append(calls, c)
			if !c.patient {
				return b.drain(b.in, calls) // someone waits: run now
			}
		case <-timeout:
			return b.drain(b.in, calls)
		case <-b.quit:
			return calls
		}
	}
	return calls
}

// takeSoon adds the items of DoSoon to a group, as many as it has room
// for. The kick is disarmed first, so that an item queued after the
// drain schedules its own; items left for want of room start the next
// group at once.
func (b *Batcher[T, R]) takeSoon(calls []call[T, R]) []call[T, R] {
	b.armed.Store(false)
	calls = b.drain(b.soon, calls)
	if len(b.soon) > 0 && b.armed.CompareAndSwap(false, true) {
		signal(b.kick)
	}
	return calls
}

// drain adds to a group what waits in ch, without waiting, as many as
// the group has room for.
func (b *Batcher[T, R]) drain(ch chan call[T, R], calls []call[T, R]) []call[T, R] {
	for len(calls) < b.max {
		select {
		case c := <-ch:
			calls = append(calls, c)
		default:
			return calls
		}
	}
	return calls
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Stats is what a batcher's loops did since it started, summed over its
// loops: how many groups they ran and of how many items, and how their
// time went. A loop's cycle is Idle (waiting for a first item), Gather
// (taking what else queued), Run (in Func) and Answer (handing the
// results back); Queued sums, over the items, the time from Do to the
// moment a loop took the group's first item, which is the time an item
// waited for the groups before its own.
type Stats struct {
	Groups, Items                     int64
	Idle, Gather, Run, Answer, Queued time.Duration
}

// Stats reads the counters; they are cheap enough to keep always.
func (b *Batcher[T, R]) Stats() Stats {
	c := &b.stats
	return Stats{Groups: c.groups.Load(), Items: c.items.Load(), Idle: time.Duration(c.idle.Load()),
		Gather: time.Duration(c.gather.Load()), Run: time.Duration(c.run.Load()), Answer: time.Duration(c.answer.Load()),
		Queued: time.Duration(c.queued.Load())}
}

type counters struct {
	groups, items, idle, gather, run, answer, queued atomic.Int64
}

func (c *counters) add(items int, queued, idle, gather, run, answer time.Duration) {
	c.groups.Add(1)
	c.items.Add(int64(items))
	c.queued.Add(int64(queued))
	c.idle.Add(int64(idle))
	c.gather.Add(int64(gather))
	c.run.Add(int64(run))
	c.answer.Add(int64(answer))
}

// answer gives each call its result, or err to all of them.
func answer[T, R any](calls []call[T, R], results []R, err error) {
	for i, c := range calls {
		var o outcome[R]
		if err != nil {
			o.err = err
		} else {
			o.r = results[i]
		}
		c.done <- o
	}
}

// Close stops taking new items and waits for running batches to finish.
// Items queued but not yet taken get ErrClosed.
func (b *Batcher[T, R]) Close() {
	close(b.quit)
	<-b.ended
	for {
		select {
		case c := <-b.in:
			c.done <- outcome[R]{err: ErrClosed}
		case c := <-b.soon: // nil for NewLate: never ready
			c.done <- outcome[R]{err: ErrClosed}
		default:
			return
		}
	}
}
