package ratelimit

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRedisTwoInstancesShareOneWindow(t *testing.T) {
	c1 := testRedisClient(t)
	c2 := testRedisClient(t)
	prefix := testPrefix(t, c1)
	clk := newClock(t0.Add(5 * time.Second))
	nodes := []Limiter{NewRedis(c1, prefix, clk.Now), NewRedis(c2, prefix, clk.Now)}
	cases := []struct {
		name    string
		req     Request
		allowed int64
	}{
		{"tier", Request{Key: "acct_1", TierLimit: 50}, 50},
		{"type", Request{Key: "acct_2", TierLimit: 1000, Type: "send", TypeLimit: 60}, 60},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := storm(t, nodes, tc.req, 32, 10); got != tc.allowed {
				t.Errorf("two nodes admitted %d, want exactly %d", got, tc.allowed)
			}
		})
	}
}

func TestRedisKeys(t *testing.T) {
	ctx := context.Background()
	c := testRedisClient(t)
	prefix := testPrefix(t, c)
	r := NewRedis(c, prefix, newClock(t0.Add(30*time.Second)).Now)
	// A type with separators and braces must still land in the account's slot.
	mustAllow(t, r, Request{Key: "acct_1", TierLimit: 10, Type: "we:ird}{type", TypeLimit: 5})
	if _, err := r.Count(ctx, "acct_1", 5); err != nil {
		t.Fatal(err)
	}
	if err := r.Remember(ctx, "acct_1", "key_1"); err != nil {
		t.Fatal(err)
	}
	keys := prefixKeys(t, c, prefix)
	sort.Strings(keys)
	id := strconv.FormatInt(t0.Unix()/60, 10) // t0 is a whole minute
	want := []string{
		prefix + "{acct_1}:f:" + id,
		prefix + "{acct_1}:k:key_1",
		prefix + "{acct_1}:t:" + id,
		prefix + "{acct_1}:y:" + id + ":we:ird}{type",
	}
	if strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Fatalf("keys = %q, want %q", keys, want)
	}
	for _, k := range keys {
		if tag := hashTag(k); tag != "acct_1" {
			t.Errorf("key %q hashes on %q, want acct_1", k, tag)
		}
		ttl, err := c.TTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		limit := counterTTL
		if strings.Contains(k, ":k:") {
			limit = knownTTL
		}
		if ttl <= limit-time.Minute || ttl > limit {
			t.Errorf("TTL of %q = %v, want just under %v", k, ttl, limit)
		}
	}
}

// hashTag applies Redis Cluster's rule for which part of a key is hashed.
func hashTag(key string) string {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 {
		return key
	}
	return key[open+1 : open+1+end]
}

func TestRedisSurvivesScriptFlush(t *testing.T) {
	ctx := context.Background()
	c := testRedisClient(t)
	r := NewRedis(c, testPrefix(t, c), newClock(t0).Now)
	req := Request{Key: "acct_1", TierLimit: 3}
	mustAllow(t, r, req)
	// With the script cache gone EVALSHA fails with NOSCRIPT and the
	// limiter must fall back to EVAL rather than report an error.
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	checkDecision(t, "after SCRIPT FLUSH", mustAllow(t, r, req),
		want(true, 1, 3, 1, 3, t0.Add(time.Minute), 0))
}

func TestRedisPing(t *testing.T) {
	c := testRedisClient(t)
	if err := NewRedis(c, testPrefix(t, c), nil).Ping(context.Background()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}
