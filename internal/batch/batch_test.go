package batch

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

// TestWorkerNamesTheLoop: each batch runs on one of the loops, which its
// context names, and no two batches run on the same loop at once.
func TestWorkerNamesTheLoop(t *testing.T) {
	const workers = 3
	var busy [workers]atomic.Int32
	var bad atomic.Int32
	b := New(func(ctx context.Context, items []int) ([]int, error) {
		w := Worker(ctx)
		if w < 0 || w >= workers {
			bad.Add(1)
			return items, nil
		}
		if busy[w].Add(1) != 1 {
			bad.Add(1)
		}
		runtime.Gosched()
		busy[w].Add(-1)
		return items, nil
	}, 4, workers)
	defer b.Close()
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := b.Do(context.Background(), i); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := bad.Load(); n != 0 {
		t.Errorf("%d batches ran on a loop out of range or already busy", n)
	}
	if Worker(context.Background()) != 0 {
		t.Error("a context outside any batch names a loop")
	}
}

// tick is a clock that moves a millisecond at each reading.
type tick struct{ n atomic.Int64 }

func (c *tick) now() time.Time {
	return time.Unix(0, 0).Add(time.Duration(c.n.Add(1)) * time.Millisecond)
}

func TestStatsCountGroupsItemsAndPhases(t *testing.T) {
	var clock tick
	b := New(func(ctx context.Context, items []int) ([]int, error) { return items, nil }, 8, 1, Clock(clock.now))
	defer b.Close()
	for i := 0; i < 3; i++ {
		if _, err := b.Do(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	// The loop counts a group after answering it: poll until the third
	// shows.
	deadline := time.Now().Add(5 * time.Second)
	var st Stats
	for st = b.Stats(); st.Groups < 3 && time.Now().Before(deadline); st = b.Stats() {
		runtime.Gosched()
	}
	if st.Groups != 3 || st.Items != 3 {
		t.Fatalf("groups %d items %d, want 3 and 3", st.Groups, st.Items)
	}
	if st.Run <= 0 || st.Answer <= 0 || st.Queued <= 0 || st.Idle <= 0 {
		t.Fatalf("a phase counted no time on a clock that always moves: %+v", st)
	}
}
