package fraud_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/fraud"
)

// redisCounters connects to the test server under a fresh prefix, or
// skips the test.
func redisCounters(t *testing.T) *fraud.Redis {
	t.Helper()
	u := os.Getenv("MSGSVC_TEST_REDIS_URL")
	if u == "" {
		t.Skip("MSGSVC_TEST_REDIS_URL is not set; set it (e.g. redis://127.0.0.1:6379/0) to run the Redis tests")
	}
	opts, err := redis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	prefix := "msgsvc-test:fraud:" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := c.Keys(ctx, prefix+"*").Result()
		if len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
	return fraud.NewRedis(c, prefix)
}

func TestRedisCountersAddAndTrail(t *testing.T) {
	r := redisCounters(t)
	ctx := context.Background()
	hour := t0.Unix() / 3600
	c := fraud.Count{AccountID: "acc_a", Env: domain.Live, Scope: domain.ScopeCountry, Key: "44"}
	var past []fraud.Count
	for h := int64(0); h <= 25; h++ { // 25 hours back: one outside the window
		x := c
		x.Hour, x.N = hour-h, 2
		past = append(past, x)
	}
	got, err := r.AddFraudCounts(ctx, past)
	if err != nil || got[0] != 2 {
		t.Fatalf("add: %v %v", got, err)
	}
	c.Hour = hour
	sums, err := r.TrailingFraudCounts(ctx, []fraud.Count{c}, fraud.BaselineHours)
	if err != nil || sums[0] != 48 {
		t.Fatalf("trailing: %v %v, want 48 (24 hours of 2)", sums, err)
	}
}

// Two guards (two nodes) sharing the Redis counters enforce one cap.
func TestRedisGuardsShareOneLimit(t *testing.T) {
	r := redisCounters(t)
	a := account("acc_a", domain.FraudRules{PerRecipientHourly: intp(10)})
	var wg sync.WaitGroup
	var mu sync.Mutex
	stopped := 0
	for node := range 3 {
		g := fraud.New(fraud.Config{Counters: r})
		mem := fraud.NewMemory() // each node's own transaction
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				ms := msgs("acc_a", domain.Live, "55", "5511999990001")
				ms[0].ID = fmt.Sprintf("msg_%d_%d", node, i)
				ds, err := g.Check(context.Background(), mem, t0, []fraud.Send{{Account: a, Messages: ms}})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				stopped += len(ds)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if stopped != 20 {
		t.Fatalf("3 nodes sent 30 to one number under a cap of 10; %d stopped, want 20", stopped)
	}
}

// When Redis fails, the guard counts in the transaction instead.
func TestRedisFailureFallsBackToTheTransaction(t *testing.T) {
	var told error
	g := fraud.New(fraud.Config{Counters: failing{}, OnError: func(err error) { told = err }})
	mem := fraud.NewMemory()
	a := account("acc_a", domain.FraudRules{PerRecipientHourly: intp(1)})
	ds, err := g.Check(context.Background(), mem, t0, []fraud.Send{{Account: a, Messages: msgs("acc_a", domain.Live, "55", repeat(2, "5511999990001")...)}})
	if err != nil || len(ds) != 1 || told == nil {
		t.Fatalf("decisions %v, err %v, told %v", ds, err, told)
	}
}

type failing struct{}

func (failing) AddFraudCounts(context.Context, []fraud.Count) ([]int64, error) {
	return nil, errors.New("redis down")
}
func (failing) TrailingFraudCounts(context.Context, []fraud.Count, int64) ([]int64, error) {
	return nil, errors.New("redis down")
}
