package batch

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
)

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		runtime.Gosched()
	}
}

// doAll runs Do for each item in its own goroutine and collects the
// results by item.
type results struct {
	mu   sync.Mutex
	got  map[int]int
	errs map[int]error
	wg   sync.WaitGroup
}

func (r *results) do(b *Batcher[int, int], items ...int) {
	for _, it := range items {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			v, err := b.Do(context.Background(), it)
			r.mu.Lock()
			defer r.mu.Unlock()
			if err != nil {
				r.errs[it] = err
				return
			}
			r.got[it] = v
		}()
	}
}

func newResults() *results { return &results{got: map[int]int{}, errs: map[int]error{}} }

func TestLateGroupTakesWhatQueuedUntilItIsTaken(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	var mu sync.Mutex
	var sizes []int
	b := NewLate(func(ctx context.Context, take func() []int) ([]int, error) {
		started <- struct{}{}
		<-release // the writer is busy with earlier transactions
		items := take()
		if again := take(); len(again) != len(items) {
			return nil, errors.New("a second take returned another group")
		}
		mu.Lock()
		sizes = append(sizes, len(items))
		mu.Unlock()
		out := make([]int, len(items))
		for i, v := range items {
			out[i] = v * 10
		}
		return out, nil
	}, 64, 2)
	defer b.Close()
	r := newResults()
	r.do(b, 1)
	<-started
	r.do(b, 2, 3, 4, 5)
	waitFor(t, "the four items to queue behind the open group", func() bool { return len(b.in) == 4 })
	select {
	case <-started:
		t.Fatal("a second group opened before the first was taken")
	default:
	}
	close(release)
	r.wg.Wait()
	if len(r.errs) != 0 {
		t.Fatalf("errors: %v", r.errs)
	}
	for i := 1; i <= 5; i++ {
		if r.got[i] != i*10 {
			t.Fatalf("item %d got %d", i, r.got[i])
		}
	}
	if len(sizes) != 1 || sizes[0] != 5 {
		t.Fatalf("group sizes %v, want one group of 5", sizes)
	}
}

func TestLateOpensTheNextGroupWhileOneRuns(t *testing.T) {
	commit := make(chan struct{})
	taken := make(chan int, 8)
	b := NewLate(func(ctx context.Context, take func() []int) ([]int, error) {
		items := take()
		taken <- items[0]
		<-commit // taken, now committing: the next group may gather
		return items, nil
	}, 64, 2)
	defer b.Close()
	r := newResults()
	r.do(b, 1)
	if got := <-taken; got != 1 {
		t.Fatalf("first group took %d", got)
	}
	r.do(b, 2)
	if got := <-taken; got != 2 {
		t.Fatalf("second group took %d", got)
	}
	// Two groups run (depth 2): a third item waits for a slot.
	r.do(b, 3)
	waitFor(t, "the third item to queue", func() bool { return len(b.in) == 1 })
	select {
	case v := <-taken:
		t.Fatalf("a third group (%d) opened beyond the depth", v)
	default:
	}
	close(commit)
	r.wg.Wait()
	if len(r.errs) != 0 || len(r.got) != 3 {
		t.Fatalf("got %v, errors %v", r.got, r.errs)
	}
}

func TestLateFailsTheWholeGroup(t *testing.T) {
	boom := errors.New("boom")
	for _, before := range []bool{true, false} {
		release := make(chan struct{})
		started := make(chan struct{}, 4)
		b := NewLate(func(ctx context.Context, take func() []int) ([]int, error) {
			started <- struct{}{}
			<-release
			if !before {
				take()
			}
			return nil, boom
		}, 64, 2)
		r := newResults()
		r.do(b, 1)
		<-started
		r.do(b, 2, 3)
		waitFor(t, "two items to queue", func() bool { return len(b.in) == 2 })
		close(release)
		r.wg.Wait()
		b.Close()
		if len(r.errs) != 3 || len(r.got) != 0 {
			t.Fatalf("failing before taking %v: got %v, errors %v", before, r.got, r.errs)
		}
		for _, err := range r.errs {
			if !errors.Is(err, boom) {
				t.Fatalf("error %v, want boom", err)
			}
		}
	}
}

func TestLateNotTakenIsAnError(t *testing.T) {
	b := NewLate(func(ctx context.Context, take func() []int) ([]int, error) { return nil, nil }, 64, 2)
	defer b.Close()
	if _, err := b.Do(context.Background(), 1); !errors.Is(err, errNotTaken) {
		t.Fatalf("err %v, want errNotTaken", err)
	}
}

func TestLateCloseFinishesGroupsUnderWay(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	b := NewLate(func(ctx context.Context, take func() []int) ([]int, error) {
		items := take()
		started <- struct{}{}
		<-release
		return items, nil
	}, 64, 2)
	r := newResults()
	r.do(b, 7)
	<-started
	closed := make(chan struct{})
	go func() { b.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a group was under way")
	default:
	}
	close(release)
	<-closed
	r.wg.Wait()
	if r.got[7] != 7 {
		t.Fatalf("the group under way was not answered: %v %v", r.got, r.errs)
	}
	if _, err := b.Do(context.Background(), 8); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
