package ratelimit

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestMemoryPrunesExpiredState(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	m := NewMemory(clk.Now)
	for i := range 500 {
		key := fmt.Sprintf("acct_%d", i)
		mustAllow(t, m, Request{Key: key, TierLimit: 10, Type: "send", TypeLimit: 5})
		if _, err := m.Count(ctx, key, 3); err != nil {
			t.Fatal(err)
		}
		if err := m.Remember(ctx, key, "k"); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		at                time.Duration
		counters, knownNo int // sizes after one request at that time
	}{
		{30 * time.Second, 1500, 500},      // same window: nothing pruned
		{time.Minute, 1, 500},              // next window: old counters gone
		{24*time.Hour + time.Minute, 1, 0}, // known pairs expired too
	}
	for _, c := range cases {
		clk.Set(t0.Add(c.at))
		mustAllow(t, m, Request{Key: "acct_0", TierLimit: 10})
		m.mu.Lock()
		counters, known := len(m.counts), len(m.known)
		m.mu.Unlock()
		if counters != c.counters || known != c.knownNo {
			t.Errorf("at +%v: %d counters, %d known; want %d, %d", c.at, counters, known, c.counters, c.knownNo)
		}
	}
}

func TestMemoryUnlimitedWindowsStoreNothing(t *testing.T) {
	m := NewMemory(newClock(t0).Now)
	for range 3 {
		mustAllow(t, m, Request{Key: "a", Type: "send"})
	}
	if n := len(m.counts); n != 0 {
		t.Errorf("unlimited requests stored %d counters, want 0", n)
	}
}
