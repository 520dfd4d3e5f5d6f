package workers

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/polltest"
)

// offered returns a condition that holds once an idle worker of p took
// item from where Go hands items over.
func offered[T any](p *Pool[T], item T) func() bool {
	return func() bool {
		select {
		case p.work <- item:
			return true
		default:
			return false
		}
	}
}

// waited reports whether wg's count reached zero within the deadline.
func waited(wg *sync.WaitGroup, d time.Duration) bool {
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

func TestAnIdleWorkerTakesTheNextItem(t *testing.T) {
	var wg sync.WaitGroup
	done := make(chan struct{})
	defer func() { close(done); wg.Wait() }()
	got := make(chan int, 2)
	p := New(time.Hour, done, &wg, func(i int) { got <- i })
	p.Go(1)
	if i := <-got; i != 1 {
		t.Fatalf("handled %d, want 1", i)
	}
	// The worker that handled 1 waits for the next item: the first offer
	// that finds it waiting, where Go hands items over, proves it is kept.
	polltest.Until(t, "the worker to wait for an item", offered(p, 2))
	if i := <-got; i != 2 {
		t.Fatalf("handled %d, want 2", i)
	}
	polltest.Until(t, "the worker to wait again", offered(p, 3))
	<-got
	if n := p.started.Load(); n != 1 {
		t.Fatalf("%d workers started for three items one after another, want 1", n)
	}
}

func TestBusyWorkersMakeRoomForMore(t *testing.T) {
	var wg sync.WaitGroup
	done := make(chan struct{})
	gate := make(chan struct{})
	var inside atomic.Int64
	p := New(time.Hour, done, &wg, func(int) { inside.Add(1); <-gate })
	for i := range 5 {
		p.Go(i)
	}
	polltest.Until(t, "five items handled at once", func() bool { return inside.Load() == 5 })
	if n := p.started.Load(); n != 5 {
		t.Fatalf("%d workers for five blocked items, want 5", n)
	}
	close(gate)
	close(done)
	if !waited(&wg, 10*time.Second) {
		t.Fatal("the workers did not end once done was closed")
	}
}

func TestIdleWorkersEndAfterLinger(t *testing.T) {
	var wg sync.WaitGroup
	done := make(chan struct{})
	defer close(done)
	var handled atomic.Int64
	p := New(10*time.Millisecond, done, &wg, func(int) { handled.Add(1) })
	p.Go(1)
	if !waited(&wg, 10*time.Second) {
		t.Fatal("an idle worker outlived its linger")
	}
	if handled.Load() != 1 {
		t.Fatalf("handled %d items, want 1", handled.Load())
	}
}

func TestWaitingForTheGroupWaitsForTheItemBeingHandled(t *testing.T) {
	var wg sync.WaitGroup
	done := make(chan struct{})
	gate := make(chan struct{})
	var finished atomic.Bool
	p := New(time.Hour, done, &wg, func(int) { <-gate; finished.Store(true) })
	p.Go(1)
	close(done)
	if waited(&wg, 20*time.Millisecond) {
		t.Fatal("the group ended while an item was still being handled")
	}
	close(gate)
	if !waited(&wg, 10*time.Second) {
		t.Fatal("the worker did not end once its item was handled and done was closed")
	}
	if !finished.Load() {
		t.Fatal("the item was not handled to its end")
	}
}
