// Package leasetest drives the lease queue of a worker under test: the
// worker's run loop in the background, and a stream of hand-overs that
// never pauses, so a test can see the worker still reach its table.
package leasetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/lease"
)

// Run runs run in the background until the test ends; then it cancels
// run's context and waits for it to return.
func Run(t testing.TB, run func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// Stream hands q the items item(0), item(1), … one at a time, a
// millisecond apart, until the test ends.
func Stream[T any](t testing.TB, q *lease.Queue[T], item func(i int) T) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			q.Hand(context.Background(), []T{item(i)})
			time.Sleep(time.Millisecond) // pacing the stream, not waiting for anything
		}
	}()
	t.Cleanup(func() { close(stop); wg.Wait() })
}
