package batch

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// groupsOf records the groups a batcher ran.
type groupsOf struct {
	mu     sync.Mutex
	groups [][]int
}

func (g *groupsOf) fn(_ context.Context, items []int) ([]int, error) {
	g.mu.Lock()
	g.groups = append(g.groups, slices.Clone(items))
	g.mu.Unlock()
	return items, nil
}

func (g *groupsOf) all() [][]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.groups)
}

// waitQueued polls until n items of DoSoon wait.
func waitQueued[T, R any](t *testing.T, b *Batcher[T, R], n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(b.soon) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d items of DoSoon queued, want %d", len(b.soon), n)
		}
		runtime.Gosched()
	}
}

// TestDoSoonRidesWithTheNextGroup: an item of DoSoon starts no group of
// its own while its wait lasts; the next item of Do takes it along.
func TestDoSoonRidesWithTheNextGroup(t *testing.T) {
	var g groupsOf
	b := New(g.fn, 8, 1)
	defer b.Close()
	soon := make(chan error, 1)
	go func() {
		r, err := b.DoSoon(context.Background(), 1, time.Hour)
		if err == nil && r != 1 {
			err = errors.New("wrong result")
		}
		soon <- err
	}()
	waitQueued(t, b, 1)
	if r, err := b.Do(context.Background(), 2); err != nil || r != 2 {
		t.Fatalf("Do: %v, %v", r, err)
	}
	if err := <-soon; err != nil {
		t.Fatal(err)
	}
	if got := g.all(); len(got) != 1 || !slices.Equal(got[0], []int{2, 1}) {
		t.Fatalf("groups %v, want one group [2 1]", got)
	}
}

// TestDoSoonStartsAGroupAfterItsWait: alone, items of DoSoon run once
// the first has waited its time, without an item of Do to ride with.
func TestDoSoonStartsAGroupAfterItsWait(t *testing.T) {
	var g groupsOf
	b := New(g.fn, 8, 1)
	defer b.Close()
	var wg sync.WaitGroup
	for i := 1; i <= 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r, err := b.DoSoon(context.Background(), i, time.Millisecond); err != nil || r != i {
				t.Errorf("DoSoon(%d): %v, %v", i, r, err)
			}
		}()
	}
	wg.Wait()
	n := 0
	for _, grp := range g.all() {
		n += len(grp)
	}
	if n != 3 {
		t.Fatalf("%d items run, want 3", n)
	}
}

// TestDoSoonBeyondAGroup: more items of DoSoon than a group holds all
// run, the ones left over in a group of their own at once.
func TestDoSoonBeyondAGroup(t *testing.T) {
	var g groupsOf
	b := New(g.fn, 4, 1)
	defer b.Close()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ { // a full channel (max × workers) waiting an hour
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := b.DoSoon(context.Background(), i, time.Hour); err != nil {
				t.Error(err)
			}
		}()
	}
	waitQueued(t, b, 4)
	if _, err := b.Do(context.Background(), 9); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	n := 0
	for _, grp := range g.all() {
		n += len(grp)
		if len(grp) > 4 {
			t.Fatalf("a group of %d, at most 4", len(grp))
		}
	}
	if n != 5 {
		t.Fatalf("%d items run, want 5", n)
	}
}

// TestDoSoonClosed: an item of DoSoon still waiting at Close is refused.
func TestDoSoonClosed(t *testing.T) {
	var g groupsOf
	b := New(g.fn, 8, 1)
	soon := make(chan error, 1)
	go func() {
		_, err := b.DoSoon(context.Background(), 1, time.Hour)
		soon <- err
	}()
	waitQueued(t, b, 1)
	b.Close()
	if err := <-soon; !errors.Is(err, ErrClosed) {
		t.Fatalf("got %v, want ErrClosed", err)
	}
	if got := g.all(); len(got) != 0 {
		t.Fatalf("groups %v ran after Close", got)
	}
}

// TestDoSoonOnALateBatcherIsDo: a NewLate batcher has no groups to ride
// with: DoSoon runs at once.
func TestDoSoonOnALateBatcherIsDo(t *testing.T) {
	b := NewLate(func(_ context.Context, take func() []int) ([]int, error) { return take(), nil }, 8, 2)
	defer b.Close()
	if r, err := b.DoSoon(context.Background(), 7, time.Hour); err != nil || r != 7 {
		t.Fatalf("got %v, %v", r, err)
	}
}
