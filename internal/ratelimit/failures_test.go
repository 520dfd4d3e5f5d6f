package ratelimit

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestFailures(t *testing.T) {
	const addr = "203.0.113.7"
	ctx := context.Background()
	reset := t0.Add(time.Minute)
	type step struct {
		op   string // "count" or "read"
		key  string
		at   time.Duration // offset from t0
		want Decision
	}
	one := func(allowed bool, rem, lim int, next time.Time, retry time.Duration) Decision {
		return want(allowed, rem, lim, rem, lim, next, retry)
	}
	cases := []struct {
		name  string
		limit int
		steps []step
	}{
		{"locks out after limit failures until the window ends", 3, []step{
			{"read", addr, 20 * time.Second, one(true, 3, 3, reset, 0)},
			{"count", addr, 20 * time.Second, one(true, 2, 3, reset, 0)},
			{"read", addr, 20 * time.Second, one(true, 2, 3, reset, 0)},
			{"count", addr, 20 * time.Second, one(true, 1, 3, reset, 0)},
			{"count", addr, 21 * time.Second, one(true, 0, 3, reset, 0)},
			{"read", addr, 21 * time.Second, one(false, 0, 3, reset, 39*time.Second)},
			{"count", addr, 21 * time.Second, one(false, 0, 3, reset, 39*time.Second)},
			{"read", "198.51.100.1", 21 * time.Second, one(true, 3, 3, reset, 0)},
			{"read", addr, 60 * time.Second, one(true, 3, 3, t0.Add(2*time.Minute), 0)},
			{"count", addr, 60 * time.Second, one(true, 2, 3, t0.Add(2*time.Minute), 0)},
		}},
		{"refused counts are not recorded", 1, []step{
			{"count", addr, 10 * time.Second, one(true, 0, 1, reset, 0)},
			{"count", addr, 10 * time.Second, one(false, 0, 1, reset, 50*time.Second)},
			{"count", addr, 10 * time.Second, one(false, 0, 1, reset, 50*time.Second)},
			{"read", addr, 70 * time.Second, one(true, 1, 1, t0.Add(2*time.Minute), 0)},
		}},
		{"limit 0 never locks out", 0, []step{
			{"count", addr, 0, one(true, 0, 0, reset, 0)},
			{"count", addr, 0, one(true, 0, 0, reset, 0)},
			{"read", addr, 0, one(true, 0, 0, reset, 0)},
		}},
	}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					clk := newClock(t0)
					be := b.new(t, clk.Now)
					for i, s := range tc.steps {
						clk.Set(t0.Add(s.at))
						f := be.Exceeded
						if s.op == "count" {
							f = be.Count
						}
						got, err := f(ctx, s.key, tc.limit)
						if err != nil {
							t.Fatalf("step %d: %v", i+1, err)
						}
						checkDecision(t, fmt.Sprintf("step %d (%s %s)", i+1, s.op, s.key), got, s.want)
					}
				})
			}
		})
	}
}

func TestFailuresAndRequestsAreSeparate(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			be := b.new(t, newClock(t0).Now)
			const key = "shared"
			if _, err := be.Count(ctx, key, 1); err != nil {
				t.Fatal(err)
			}
			if d := mustAllow(t, be, Request{Key: key, TierLimit: 1}); !d.Allowed {
				t.Errorf("a failure consumed the request window: %s", describe(d))
			}
			if d, err := be.Exceeded(ctx, key, 2); err != nil || !d.Allowed || d.Tier.Remaining != 1 {
				t.Errorf("a request counted as a failure: %s, %v", describe(d), err)
			}
		})
	}
}

func TestKnown(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			be := b.new(t, newClock(t0).Now)
			if err := be.Remember(ctx, "203.0.113.7", "key_1"); err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				addr, keyID string
				want        bool
			}{
				{"203.0.113.7", "key_1", true},
				{"203.0.113.7", "key_2", false},
				{"198.51.100.1", "key_1", false},
				{"203.0.113.7", "", false},
			}
			for _, c := range cases {
				got, err := be.Known(ctx, c.addr, c.keyID)
				if err != nil {
					t.Fatal(err)
				}
				if got != c.want {
					t.Errorf("Known(%q, %q) = %v, want %v", c.addr, c.keyID, got, c.want)
				}
			}
		})
	}
}

func TestMemoryKnownExpiresAfter24h(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	m := NewMemory(clk.Now)
	for _, k := range []string{"k", "k2"} {
		if err := m.Remember(ctx, "a", k); err != nil {
			t.Fatal(err)
		}
	}
	// Remembering again restarts the 24 hours.
	clk.Set(t0.Add(12 * time.Hour))
	if err := m.Remember(ctx, "a", "k2"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		at    time.Duration
		keyID string
		want  bool
	}{
		{24*time.Hour - time.Second, "k", true},
		{24 * time.Hour, "k", false},
		{36*time.Hour - time.Second, "k2", true},
		{36 * time.Hour, "k2", false},
	}
	for _, c := range cases {
		clk.Set(t0.Add(c.at))
		got, err := m.Known(ctx, "a", c.keyID)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("at +%v Known(a, %s) = %v, want %v", c.at, c.keyID, got, c.want)
		}
	}
}
