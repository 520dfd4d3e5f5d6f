package ratelimit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

type brokenLimiter struct{ err error }

func (b brokenLimiter) Allow(context.Context, Request) (Decision, error) { return Decision{}, b.err }

func TestFailOpenAllowsOnBackendError(t *testing.T) {
	boom := errors.New("backend down")
	cases := []struct {
		name string
		req  Request
		// windows reported as untouched: remaining/limit for tier and type
		tierRem, tierLim, typeRem, typeLim int
	}{
		{"typed", Request{Key: "a", TierLimit: 10, Type: "send", TypeLimit: 5}, 10, 10, 5, 5},
		{"untyped mirrors the tier", Request{Key: "a", TierLimit: 10}, 10, 10, 10, 10},
		{"unlimited stays unlimited", Request{Key: "a", TierLimit: 0, Type: "send", TypeLimit: -1}, 0, 0, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var reported []error
			l := FailOpen(brokenLimiter{boom}, func(err error) { reported = append(reported, err) })
			d, err := l.Allow(context.Background(), tc.req)
			if err != nil {
				t.Fatalf("FailOpen returned error %v", err)
			}
			// Reset comes from the wall clock here; compare everything else.
			d.Tier.Reset, d.Type.Reset = time.Time{}, time.Time{}
			checkDecision(t, "decision", d, want(true, tc.tierRem, tc.tierLim, tc.typeRem, tc.typeLim, time.Time{}, 0))
			if len(reported) != 1 || !errors.Is(reported[0], boom) {
				t.Errorf("onError got %v, want [%v]", reported, boom)
			}
		})
	}
}

func TestFailOpenPassesDecisionsThrough(t *testing.T) {
	calls := 0
	l := FailOpen(NewMemory(newClock(t0).Now), func(error) { calls++ })
	req := Request{Key: "a", TierLimit: 1}
	mustAllow(t, l, req)
	// A refusal is a decision, not an error: it must not be turned into an allow.
	checkDecision(t, "second request", mustAllow(t, l, req),
		want(false, 0, 1, 0, 1, t0.Add(time.Minute), 60*time.Second))
	if calls != 0 {
		t.Errorf("onError called %d times without an error", calls)
	}
}

func TestFailOpenNilCallback(t *testing.T) {
	d := mustAllow(t, FailOpen(brokenLimiter{errors.New("x")}, nil), Request{Key: "a", TierLimit: 1})
	if !d.Allowed {
		t.Error("refused with a nil onError")
	}
}

// TestRedisUnreachable needs no server: nothing listens on port 1.
func TestRedisUnreachable(t *testing.T) {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, DialTimeout: time.Second})
	t.Cleanup(func() { _ = c.Close() })
	clk := newClock(t0.Add(20 * time.Second))
	r := NewRedis(c, "msgsvc-test:", clk.Now)

	var reported []error
	d, err := FailOpen(r, func(err error) { reported = append(reported, err) }).
		Allow(ctx, Request{Key: "a", TierLimit: 10, Type: "send", TypeLimit: 5})
	if err != nil {
		t.Fatalf("FailOpen returned error %v", err)
	}
	checkDecision(t, "fail-open decision", d, want(true, 10, 10, 5, 5, t0.Add(time.Minute), 0))
	if len(reported) != 1 || reported[0] == nil {
		t.Errorf("onError got %v, want one connection error", reported)
	}

	_, errAllow := r.Allow(ctx, Request{Key: "a", TierLimit: 1})
	_, errCount := r.Count(ctx, "a", 1)
	_, errExceeded := r.Exceeded(ctx, "a", 1)
	errRemember := r.Remember(ctx, "a", "k")
	_, errKnown := r.Known(ctx, "a", "k")
	errPing := r.Ping(ctx)
	for op, err := range map[string]error{"Allow": errAllow, "Count": errCount, "Exceeded": errExceeded,
		"Remember": errRemember, "Known": errKnown, "Ping": errPing} {
		if err == nil {
			t.Errorf("%s against a closed port returned no error", op)
		}
	}
	// Unlimited requests need no round trip, so they succeed even now.
	if _, err := r.Allow(ctx, Request{Key: "a"}); err != nil {
		t.Errorf("unlimited Allow touched the server: %v", err)
	}
}
