package ratelimit

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// countingHook counts the dials and commands a client attempts.
type countingHook struct{ dials, cmds atomic.Int64 }

func (h *countingHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		h.dials.Add(1)
		return next(ctx, network, addr)
	}
}

func (h *countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.cmds.Add(1)
		return next(ctx, cmd)
	}
}

func (h *countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// openUnreachable opens a backend the way the service does, on a port where
// nothing listens, with a hook counting what it attempts.
func openUnreachable(t *testing.T, now func() time.Time) (*Redis, *countingHook) {
	t.Helper()
	b, closeFn, err := Open("redis://127.0.0.1:1/0", "msgsvc-test:", now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeFn() })
	r := b.(*Redis)
	h := &countingHook{}
	r.c.AddHook(h)
	return r, h
}

func TestBreakerSkipsTheServerAfterAFailure(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0.Add(5 * time.Second))
	r, h := openUnreachable(t, clk.Now)
	req := Request{Key: "acct_1", TierLimit: 10, Type: "send", TypeLimit: 5}

	if _, err := r.Allow(ctx, req); err == nil || errors.Is(err, ErrUnavailable) {
		t.Fatalf("first Allow: err %v, want a connection error", err)
	}
	// Open's fail-fast settings: one dial per attempt and one retry.
	if d := h.dials.Load(); d < 1 || d > 2 {
		t.Errorf("first Allow dialled %d times, want 1 or 2", d)
	}

	dials := h.dials.Load()
	ops := map[string]func() error{
		"Allow":    func() error { _, err := r.Allow(ctx, req); return err },
		"Usage":    func() error { _, err := r.Usage(ctx, "acct_1", 10, map[string]int{"send": 5}); return err },
		"Count":    func() error { _, err := r.Count(ctx, "ip:1", 30); return err },
		"Exceeded": func() error { _, err := r.Exceeded(ctx, "ip:1", 30); return err },
		"Remember": func() error { return r.Remember(ctx, "ip:1", "key_1") },
		"Known":    func() error { _, err := r.Known(ctx, "ip:1", "key_1"); return err },
	}
	for name, op := range ops {
		if err := op(); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s during cooldown: err %v, want ErrUnavailable", name, err)
		}
	}
	if d := h.dials.Load(); d != dials {
		t.Errorf("operations during cooldown dialled %d more times", d-dials)
	}

	// Readiness always asks the server.
	if err := r.Ping(ctx); err == nil || errors.Is(err, ErrUnavailable) {
		t.Errorf("Ping during cooldown: err %v, want a connection error", err)
	}

	clk.Set(t0.Add(5*time.Second + breakerCooldown))
	if _, err := r.Allow(ctx, req); err == nil || errors.Is(err, ErrUnavailable) {
		t.Errorf("Allow after cooldown: err %v, want a fresh connection error", err)
	}
}

func TestBreakerClosesOnSuccess(t *testing.T) {
	ctx := context.Background()
	c := testRedisClient(t)
	clk := newClock(t0.Add(5 * time.Second))
	r := NewRedis(c, testPrefix(t, c), clk.Now)
	req := Request{Key: "acct_1", TierLimit: 10}

	r.downUntil.Store(clk.Now().Add(breakerCooldown).UnixNano())
	if _, err := r.Allow(ctx, req); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Allow with the breaker open: err %v", err)
	}
	if err := r.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	checkDecision(t, "after a good Ping", mustAllow(t, r, req), want(true, 9, 10, 9, 10, t0.Add(time.Minute), 0))

	// A reply error proves the server is there: it must not open the breaker.
	replyErr := c.Do(ctx, "NOSUCHCOMMAND").Err()
	if replyErr == nil {
		t.Fatal("unknown command succeeded")
	}
	r.observe(ctx, replyErr)
	if r.downUntil.Load() != 0 {
		t.Error("a reply error opened the breaker")
	}
	// Nor does a caller giving up.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	r.observe(canceled, canceled.Err())
	if r.downUntil.Load() != 0 {
		t.Error("a canceled caller opened the breaker")
	}
}

func TestFailFastKeepsExplicitSettings(t *testing.T) {
	cases := []struct {
		url                     string
		dial, read, write, pool time.Duration
		retries, dialRetries    int
		minBackoff, maxBackoff  time.Duration
	}{
		{"redis://127.0.0.1:6379/0", fastDialTimeout, fastIOTimeout, fastIOTimeout, fastPoolTimeout, 1, 1,
			time.Millisecond, fastMaxBackoff},
		{"redis://127.0.0.1:6379/0?dial_timeout=2s&read_timeout=1s&max_retries=-1&pool_timeout=3s&max_retry_backoff=50ms",
			2 * time.Second, time.Second, time.Second, 3 * time.Second, -1, 1, time.Millisecond, 50 * time.Millisecond},
	}
	for _, c := range cases {
		o, err := redis.ParseURL(c.url)
		if err != nil {
			t.Fatal(err)
		}
		failFast(o)
		got := []any{o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout, o.MaxRetries, o.DialerRetries, o.MinRetryBackoff, o.MaxRetryBackoff}
		want := []any{c.dial, c.read, c.write, c.pool, c.retries, c.dialRetries, c.minBackoff, c.maxBackoff}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: setting %d = %v, want %v", c.url, i, got[i], want[i])
			}
		}
	}
}
