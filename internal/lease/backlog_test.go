package lease

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Backlog counts what waits in memory and how long the oldest of it has
// waited since its hand-over, and its channel closes as soon as items
// leave memory: a send held back until the dispatcher catches up wakes
// then, and finds the next oldest.
func TestBacklogTellsHowLongTheOldestWaited(t *testing.T) {
	f := newFixture(Config[item]{Workers: 1, Chunk: 2, Batch: 2})
	f.h.gate = make(chan struct{})
	ctx := context.Background()
	check := func(step string, wantN int, wantOldest time.Duration) <-chan struct{} {
		t.Helper()
		n, oldest, moved := f.q.Backlog()
		if n != wantN || oldest != wantOldest {
			t.Fatalf("%s: %d waiting, the oldest for %v; want %d, %v", step, n, oldest, wantN, wantOldest)
		}
		return moved
	}
	waitMoved := func(step string, moved <-chan struct{}) {
		t.Helper()
		select {
		case <-moved:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the backlog's channel did not close", step)
		}
	}
	check("empty", 0, 0)

	hand := func(prefix string, n int) {
		var items []item
		for i := range n {
			items = append(items, f.tb.add(fmt.Sprintf("%s%d", prefix, i), "node-1", f.clk.now().Add(time.Minute)))
		}
		if kept := f.q.Hand(ctx, items); kept != n {
			t.Fatalf("kept %d of %d", kept, n)
		}
	}
	hand("a", 3)
	f.clk.advance(40 * time.Millisecond)
	hand("b", 2)
	f.clk.advance(60 * time.Millisecond)
	moved := check("before the worker runs", 5, 100*time.Millisecond)

	f.run(t) // the worker takes a0 and a1 and holds them at the gate
	waitMoved("first chunk", moved)
	moved = check("a2 still waits", 3, 100*time.Millisecond)

	f.h.gate <- struct{}{} // a0 and a1 done; the worker takes a2 and b0
	waitMoved("second chunk", moved)
	moved = check("b1 waits, handed over 40 ms after the a's", 1, 60*time.Millisecond)

	f.h.gate <- struct{}{}
	waitMoved("last chunk", moved)
	check("all taken", 0, 0)
	f.h.gate <- struct{}{}
}
