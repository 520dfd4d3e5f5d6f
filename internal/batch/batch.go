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
	done chan outcome[R]
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
}

// Option tunes New.
type Option func(*options)

type options struct{ now func() time.Time }

// Clock sets the clock the batcher times its cycle with (default
// time.Now).
func Clock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// New starts a batcher with `workers` loops, each taking up to max items per
// call. One worker is right for SQLite; PostgreSQL gains from a few.
func New[T, R any](fn Func[T, R], max, workers int, opts ...Option) *Batcher[T, R] {
	o := options{now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	b := &Batcher[T, R]{fn: fn, max: max, in: make(chan call[T, R], max*workers), quit: make(chan struct{}), ended: make(chan struct{}),
		now: o.now, soon: make(chan call[T, R], max*workers), kick: make(chan struct{}, 1)}
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
	c := call[T, R]{item: item, done: make(chan outcome[R], 1)}
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
