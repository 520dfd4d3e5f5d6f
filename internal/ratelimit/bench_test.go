package ratelimit

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
)

// benchAllow spreads parallel requests over 1024 accounts with limits high
// enough that every request takes the counting path.
func benchAllow(b *testing.B, l Limiter) {
	ctx := context.Background()
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = "acct_" + strconv.Itoa(i)
	}
	var next atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			k := keys[next.Add(1)%uint64(len(keys))]
			if _, err := l.Allow(ctx, Request{Key: k, TierLimit: 1 << 30, Type: "send", TypeLimit: 1 << 30}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkMemoryAllow(b *testing.B) {
	benchAllow(b, NewMemory(newClock(t0).Now))
}

func BenchmarkRedisAllow(b *testing.B) {
	c := testRedisClient(b)
	benchAllow(b, NewRedis(c, testPrefix(b, c), newClock(t0).Now))
}
