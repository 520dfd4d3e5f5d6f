package batch

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func TestBatcherGroupsAndAnswersEachCaller(t *testing.T) {
	var calls, maxSeen atomic.Int64
	entered := make(chan struct{})
	release := make(chan struct{})
	b := New(func(ctx context.Context, items []int) ([]int, error) {
		if calls.Add(1) == 1 {
			close(entered)
			<-release // hold the first batch so the others queue up
		}
		if int64(len(items)) > maxSeen.Load() {
			maxSeen.Store(int64(len(items)))
		}
		out := make([]int, len(items))
		for i, v := range items {
			out[i] = v * 2
		}
		return out, nil
	}, 64, 1)
	defer b.Close()

	var wg sync.WaitGroup
	errs := make(chan error, 100)
	call := func(i int) {
		defer wg.Done()
		r, err := b.Do(context.Background(), i)
		if err != nil || r != 2*i {
			errs <- errors.New("wrong result")
		}
	}
	wg.Add(1)
	go call(0)
	<-entered
	for i := 1; i < 100; i++ {
		wg.Add(1)
		go call(i)
	}
	for len(b.in) < cap(b.in) { // the queue fills up behind the held batch
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if maxSeen.Load() != 64 {
		t.Fatalf("no grouping: %d calls, largest batch %d", calls.Load(), maxSeen.Load())
	}
}

func TestBatcherPropagatesBatchError(t *testing.T) {
	boom := errors.New("boom")
	b := New(func(ctx context.Context, items []int) ([]int, error) { return nil, boom }, 8, 2)
	defer b.Close()
	if _, err := b.Do(context.Background(), 1); !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
}

func TestBatcherClosed(t *testing.T) {
	b := New(func(ctx context.Context, items []int) ([]int, error) { return items, nil }, 8, 1)
	b.Close()
	if _, err := b.Do(context.Background(), 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("got %v, want ErrClosed", err)
	}
}
