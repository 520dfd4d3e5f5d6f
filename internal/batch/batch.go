// Package batch groups concurrent requests into one call: group commit. A
// caller hands in one item and waits; one loop takes everything that queued
// up while the previous call ran and hands it over at once. Under light load
// a batch is one item and adds no delay; under heavy load batches grow by
// themselves, which is what makes one SQLite writer fast.
package batch

import (
	"context"
	"errors"
)

// ErrClosed is returned to callers after Close.
var ErrClosed = errors.New("batcher closed")

// Func processes a batch; it returns one result per item, in order, or an
// error for the whole batch.
type Func[T, R any] func(ctx context.Context, items []T) ([]R, error)

type call[T, R any] struct {
	item T
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
}

// New starts a batcher with `workers` loops, each taking up to max items per
// call. One worker is right for SQLite; PostgreSQL gains from a few.
func New[T, R any](fn Func[T, R], max, workers int) *Batcher[T, R] {
	b := &Batcher[T, R]{fn: fn, max: max, in: make(chan call[T, R], max*workers), quit: make(chan struct{}), ended: make(chan struct{})}
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
	c := call[T, R]{item: item, done: make(chan outcome[R], 1)}
	var zero R
	select {
	case <-b.quit:
		return zero, ErrClosed
	default:
	}
	select {
	case b.in <- c:
	case <-b.quit:
		return zero, ErrClosed
	case <-ctx.Done():
		return zero, ctx.Err()
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
		select {
		case c := <-b.in:
			calls = append(calls, c)
		case <-b.quit:
			return
		}
	drain:
		for len(calls) < b.max {
			select {
			case c := <-b.in:
				calls = append(calls, c)
			default:
				break drain
			}
		}
		for _, c := range calls {
			items = append(items, c.item)
		}
		// The batch runs to completion even during shutdown: its callers
		// are waiting for an answer, and a half-known outcome helps nobody.
		results, err := b.fn(ctx, items)
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
		default:
			return
		}
	}
}
