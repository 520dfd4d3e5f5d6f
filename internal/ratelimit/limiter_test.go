package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestWindowBoundary(t *testing.T) {
	// After ten requests at 10:00:30.25 the window is full; each probe then
	// moves the clock forward and makes one more request.
	probes := []struct {
		at   time.Duration // offset from t0
		want Decision
	}{
		{30250 * time.Millisecond, want(false, 0, 10, 0, 10, t0.Add(time.Minute), 30*time.Second)},
		{45 * time.Second, want(false, 0, 10, 0, 10, t0.Add(time.Minute), 15*time.Second)},
		{59999 * time.Millisecond, want(false, 0, 10, 0, 10, t0.Add(time.Minute), time.Second)},
		{60 * time.Second, want(true, 9, 10, 9, 10, t0.Add(2*time.Minute), 0)},
		{119 * time.Second, want(true, 8, 10, 8, 10, t0.Add(2*time.Minute), 0)},
		{120 * time.Second, want(true, 9, 10, 9, 10, t0.Add(3*time.Minute), 0)},
	}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			clk := newClock(t0.Add(30250 * time.Millisecond))
			l := b.new(t, clk.Now)
			req := Request{Key: "acct_1", TierLimit: 10}
			for i := 1; i <= 10; i++ {
				checkDecision(t, fmt.Sprintf("request %d", i), mustAllow(t, l, req),
					want(true, 10-i, 10, 10-i, 10, t0.Add(time.Minute), 0))
			}
			for _, p := range probes {
				clk.Set(t0.Add(p.at))
				checkDecision(t, fmt.Sprintf("at +%v", p.at), mustAllow(t, l, req), p.want)
			}
		})
	}
}

func TestRefusedRequestsDoNotConsume(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			clk := newClock(t0.Add(10 * time.Second))
			l := b.new(t, clk.Now)
			reset := t0.Add(time.Minute)
			send := Request{Key: "acct_1", TierLimit: 10, Type: "send", TypeLimit: 3}
			media := Request{Key: "acct_1", TierLimit: 10, Type: "media", TypeLimit: 5}
			plain := Request{Key: "acct_1", TierLimit: 10}

			for range 3 {
				mustAllow(t, l, send)
			}
			// The type window is full: these must leave the tier at 7.
			for i := range 5 {
				checkDecision(t, fmt.Sprintf("refused send %d", i), mustAllow(t, l, send),
					want(false, 7, 10, 0, 3, reset, 50*time.Second))
			}
			allowed := 0
			for range 10 {
				if mustAllow(t, l, plain).Allowed {
					allowed++
				}
			}
			if allowed != 7 {
				t.Errorf("untyped requests allowed after type refusals = %d, want 7", allowed)
			}
			// The tier window is full: a media request is refused and must
			// leave the media window untouched.
			for i := range 3 {
				checkDecision(t, fmt.Sprintf("refused media %d", i), mustAllow(t, l, media),
					want(false, 0, 10, 5, 5, reset, 50*time.Second))
			}
		})
	}
}

func TestHeaderValues(t *testing.T) {
	type step struct {
		req  Request
		want Decision
	}
	reset := t0.Add(time.Minute)
	const retry = 30 * time.Second
	ok := func(tr, tl, yr, yl int) Decision { return want(true, tr, tl, yr, yl, reset, 0) }
	no := func(tr, tl, yr, yl int) Decision { return want(false, tr, tl, yr, yl, reset, retry) }
	tierOnly := Request{Key: "a", TierLimit: 3}
	typed := Request{Key: "a", TierLimit: 5, Type: "send", TypeLimit: 2}
	cases := []struct {
		name  string
		steps []step
	}{
		{"tier only reports the tier window twice", []step{
			{tierOnly, ok(2, 3, 2, 3)}, {tierOnly, ok(1, 3, 1, 3)}, {tierOnly, ok(0, 3, 0, 3)},
			{tierOnly, no(0, 3, 0, 3)},
		}},
		{"type window runs out first", []step{
			{typed, ok(4, 5, 1, 2)}, {typed, ok(3, 5, 0, 2)}, {typed, no(3, 5, 0, 2)},
		}},
		{"tier window runs out first", []step{
			{Request{Key: "a", TierLimit: 2, Type: "status", TypeLimit: 2000}, ok(1, 2, 1999, 2000)},
			{Request{Key: "a", TierLimit: 2, Type: "status", TypeLimit: 2000}, ok(0, 2, 1998, 2000)},
			{Request{Key: "a", TierLimit: 2, Type: "status", TypeLimit: 2000}, no(0, 2, 1998, 2000)},
		}},
		{"unlimited tier", []step{
			{Request{Key: "a", Type: "send", TypeLimit: 2}, ok(0, 0, 1, 2)},
			{Request{Key: "a", Type: "send", TypeLimit: 2}, ok(0, 0, 0, 2)},
			{Request{Key: "a", Type: "send", TypeLimit: 2}, no(0, 0, 0, 2)},
		}},
		{"unlimited type", []step{
			{Request{Key: "a", TierLimit: 2, Type: "send"}, ok(1, 2, 0, 0)},
			{Request{Key: "a", TierLimit: 2, Type: "send"}, ok(0, 2, 0, 0)},
			{Request{Key: "a", TierLimit: 2, Type: "send"}, no(0, 2, 0, 0)},
		}},
		{"both unlimited, negative limits too", []step{
			{Request{Key: "a"}, ok(0, 0, 0, 0)},
			{Request{Key: "a", TierLimit: -1, Type: "send", TypeLimit: -5}, ok(0, 0, 0, 0)},
			{Request{Key: "a", Type: "send"}, ok(0, 0, 0, 0)},
		}},
		{"types have separate windows sharing the tier", []step{
			{Request{Key: "a", TierLimit: 5, Type: "send", TypeLimit: 1}, ok(4, 5, 0, 1)},
			{Request{Key: "a", TierLimit: 5, Type: "send", TypeLimit: 1}, no(4, 5, 0, 1)},
			{Request{Key: "a", TierLimit: 5, Type: "status", TypeLimit: 1}, ok(3, 5, 0, 1)},
			{Request{Key: "a", TierLimit: 5}, ok(2, 5, 2, 5)},
		}},
		{"accounts have separate windows", []step{
			{Request{Key: "a", TierLimit: 1}, ok(0, 1, 0, 1)},
			{Request{Key: "a", TierLimit: 1}, no(0, 1, 0, 1)},
			{Request{Key: "b", TierLimit: 1}, ok(0, 1, 0, 1)},
		}},
		{"a lowered limit below the count reports zero remaining", []step{
			{Request{Key: "a", TierLimit: 5}, ok(4, 5, 4, 5)},
			{Request{Key: "a", TierLimit: 5}, ok(3, 5, 3, 5)},
			{Request{Key: "a", TierLimit: 1}, no(0, 1, 0, 1)},
		}},
	}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					clk := newClock(t0.Add(30 * time.Second))
					l := b.new(t, clk.Now)
					for i, s := range tc.steps {
						checkDecision(t, fmt.Sprintf("step %d", i+1), mustAllow(t, l, s.req), s.want)
					}
				})
			}
		})
	}
}

func TestConcurrentAllowAdmitsExactlyTheLimit(t *testing.T) {
	const goroutines, calls = 64, 20
	cases := []struct {
		name  string
		req   Request
		final Decision // one more request after the storm
	}{
		{"tier is the bound",
			Request{Key: "acct", TierLimit: 100, Type: "send", TypeLimit: 1000},
			want(false, 0, 100, 900, 1000, t0.Add(time.Minute), 50*time.Second)},
		{"type is the bound",
			Request{Key: "acct", TierLimit: 1000, Type: "send", TypeLimit: 100},
			want(false, 900, 1000, 0, 100, t0.Add(time.Minute), 50*time.Second)},
	}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					clk := newClock(t0.Add(10 * time.Second))
					l := b.new(t, clk.Now)
					if got := storm(t, []Limiter{l}, tc.req, goroutines, calls); got != 100 {
						t.Errorf("allowed %d of %d, want exactly 100", got, goroutines*calls)
					}
					checkDecision(t, "after the storm", mustAllow(t, l, tc.req), tc.final)
				})
			}
		})
	}
}

// storm runs goroutines × calls requests spread over the limiters and returns
// how many were allowed.
func storm(t *testing.T, ls []Limiter, req Request, goroutines, calls int) int64 {
	t.Helper()
	var allowed atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for g := range goroutines {
		l := ls[g%len(ls)]
		wg.Go(func() {
			for range calls {
				d, err := l.Allow(context.Background(), req)
				if err != nil {
					failed.Store(err)
					return
				}
				if d.Allowed {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("Allow: %v", err)
	}
	return allowed.Load()
}

func TestInvalidKeys(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			be := b.new(t, newClock(t0).Now)
			for _, key := range []string{"", "{acct}", "a}b", "a{b"} {
				_, errAllow := be.Allow(ctx, Request{Key: key, TierLimit: 1})
				_, errCount := be.Count(ctx, key, 1)
				_, errExceeded := be.Exceeded(ctx, key, 1)
				errRemember := be.Remember(ctx, key, "k")
				_, errKnown := be.Known(ctx, key, "k")
				for op, err := range map[string]error{"Allow": errAllow, "Count": errCount,
					"Exceeded": errExceeded, "Remember": errRemember, "Known": errKnown} {
					if !errors.Is(err, ErrInvalidKey) {
						t.Errorf("%s(%q) error = %v, want ErrInvalidKey", op, key, err)
					}
				}
			}
		})
	}
}
