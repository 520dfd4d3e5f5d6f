package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisURLEnv names the server the Redis tests use; unset, they are skipped.
const redisURLEnv = "MSGSVC_TEST_REDIS_URL"

// t0 is a whole minute, so offsets from it read as positions in a window.
var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(t time.Time) *fakeClock { return &fakeClock{t: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

type backendCase struct {
	name string
	new  func(tb testing.TB, now func() time.Time) Backend
}

// backends lists every backend; the Redis one skips itself without a server.
func backends() []backendCase {
	return []backendCase{
		{"memory", func(_ testing.TB, now func() time.Time) Backend { return NewMemory(now) }},
		{"redis", func(tb testing.TB, now func() time.Time) Backend {
			c := testRedisClient(tb)
			return NewRedis(c, testPrefix(tb, c), now)
		}},
	}
}

// testRedisClient connects to the test server or skips the test.
func testRedisClient(tb testing.TB) *redis.Client {
	tb.Helper()
	u := os.Getenv(redisURLEnv)
	if u == "" {
		tb.Skipf("%s is not set; set it (e.g. redis://127.0.0.1:6379/0) to run the Redis tests", redisURLEnv)
	}
	opts, err := redis.ParseURL(u)
	if err != nil {
		tb.Fatalf("%s: %v", redisURLEnv, err)
	}
	c := redis.NewClient(opts)
	tb.Cleanup(func() { _ = c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		tb.Fatalf("redis at %s: %v", u, err)
	}
	return c
}

// testPrefix returns a fresh key prefix and deletes its keys after the test.
func testPrefix(tb testing.TB, c *redis.Client) string {
	tb.Helper()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	prefix := "msgsvc-test:" + hex.EncodeToString(b) + ":"
	tb.Cleanup(func() {
		ctx := context.Background()
		for _, k := range prefixKeys(tb, c, prefix) {
			c.Del(ctx, k)
		}
	})
	return prefix
}

func prefixKeys(tb testing.TB, c *redis.Client, prefix string) []string {
	tb.Helper()
	var keys []string
	iter := c.Scan(context.Background(), 0, prefix+"*", 100).Iterator()
	for iter.Next(context.Background()) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		tb.Errorf("scan %s*: %v", prefix, err)
	}
	return keys
}

// describe renders a decision compactly so comparisons print usefully and
// times compare by instant rather than by representation.
func describe(d Decision) string {
	verdict := "allowed"
	if !d.Allowed {
		verdict = "refused"
	}
	return fmt.Sprintf("%s tier %d/%d@%d type %d/%d@%d retry %v", verdict,
		d.Tier.Remaining, d.Tier.Limit, d.Tier.Reset.Unix(),
		d.Type.Remaining, d.Type.Limit, d.Type.Reset.Unix(), d.RetryAfter)
}

// want builds an expected decision for windows resetting at reset.
func want(allowed bool, tierRem, tierLim, typeRem, typeLim int, reset time.Time, retry time.Duration) Decision {
	return Decision{
		Allowed:    allowed,
		Tier:       Window{Limit: tierLim, Remaining: tierRem, Reset: reset},
		Type:       Window{Limit: typeLim, Remaining: typeRem, Reset: reset},
		RetryAfter: retry,
	}
}

func checkDecision(tb testing.TB, step string, got, exp Decision) {
	tb.Helper()
	if g, w := describe(got), describe(exp); g != w {
		tb.Errorf("%s:\n got  %s\n want %s", step, g, w)
	}
}

func mustAllow(tb testing.TB, l Limiter, r Request) Decision {
	tb.Helper()
	d, err := l.Allow(context.Background(), r)
	if err != nil {
		tb.Fatalf("Allow(%+v): %v", r, err)
	}
	return d
}
