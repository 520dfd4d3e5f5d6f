// Package workers runs a connection's handlers on goroutines that wait a
// while for the next item instead of ending after one. A new goroutine
// grows its stack again through a handler's deep calls (the router, the
// tracker, the database driver), copying it each time it doubles, and on
// a small item that costs about as much as the item itself.
package workers

import (
	"sync"
	"sync/atomic"
	"time"
)

// Pool hands items to its idle workers, and starts a worker when none is
// idle. It bounds nothing itself: the caller limits how many items are
// handled at once (a window, a semaphore released by handle), and so how
// many workers are busy; the idle ones end after linger.
type Pool[T any] struct {
	work   chan T
	linger time.Duration
	done   <-chan struct{}
	wg     *sync.WaitGroup
	handle func(T)
	// started counts the workers started, for the tests.
	started atomic.Int64
}

// New returns a pool whose workers call handle for each item, and end
// once done is closed or after linger without an item. Each worker is
// counted in wg, so that waiting on wg after done is closed waits for the
// items still being handled.
func New[T any](linger time.Duration, done <-chan struct{}, wg *sync.WaitGroup, handle func(T)) *Pool[T] {
	return &Pool[T]{work: make(chan T), linger: linger, done: done, wg: wg, handle: handle}
}

// Go has item handled by an idle worker, or by a new one.
func (p *Pool[T]) Go(item T) {
	select {
	case p.work <- item:
		return
	default:
	}
	p.wg.Add(1)
	p.started.Add(1)
	go p.worker(item)
}

func (p *Pool[T]) worker(item T) {
	defer p.wg.Done()
	idle := time.NewTimer(p.linger)
	defer idle.Stop()
	for {
		p.handle(item)
		idle.Reset(p.linger)
		select {
		case item = <-p.work:
		case <-idle.C:
			return
		case <-p.done:
			return
		}
	}
}
