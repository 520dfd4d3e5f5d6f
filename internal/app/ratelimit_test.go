package app

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/ratelimit/ratelimittest"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/msgsvc/msgsvc/internal/api"
	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/nodetest"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// redisURLEnv names the Redis server of the shared-window tests; unset,
// they are skipped.
const redisURLEnv = "MSGSVC_TEST_REDIS_URL"

// rlPrefix is the key prefix the service gives the rate-limit backend.
const rlPrefix = "msgsvc:rl:"

func testRedisURL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv(redisURLEnv)
	if u == "" {
		tb.Skipf("%s is not set; set it (e.g. redis://127.0.0.1:6379/0) to run the Redis tests", redisURLEnv)
	}
	return u
}

// startNode runs one more msgsvc node on dsn with the given rate-limit
// backend and clock, configured like newEnv's; it stops when the test ends.
// The returned env has no account of its own: use newAccount.
func startNode(t *testing.T, dsn, backend string, clk *clock) *env {
	t.Helper()
	cfg := config.Config{Dev: true, DB: dsn, Addr: "127.0.0.1:0", WebhookAllowPrivate: true, SimulatorDelay: 30 * time.Millisecond,
		RateLimitBackend: backend, NodeID: fmt.Sprintf("rl-node-%p", clk), DispatchWorkers: 2,
		ShutdownTimeout: 5 * time.Second, LogLevel: "error"}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := NewServer(context.Background(), cfg, log, Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	nodetest.Run(t, "node", srv.Run)
	return &env{t: t, srv: srv, st: srv.Store(), base: "http://" + srv.Addr(), clock: clk, client: &http.Client{}}
}

// newAccount creates an account of tier with a test key; limits nil keeps
// the tier's defaults.
func (e *env) newAccount(tier string, limits *domain.Limits) (domain.Account, string) {
	e.t.Helper()
	a := e.addAccount(NewAccount{Name: "RL " + tier, Tier: tier, Credits: 100, Currency: "USD", Country: "55"})
	if limits != nil {
		if err := e.st.SetLimits(context.Background(), a.ID, *limits); err != nil {
			e.t.Fatal(err)
		}
		a.Limits = *limits
	}
	k, _ := e.addKey(a.ID, "test")
	return a, k.Secret
}

// placeAt moves the clock forward to offset past the start of a coming
// minute and returns that minute's end, where its windows reset. Real time
// keeps running, so an offset well inside the minute leaves room for the
// test's requests.
func (e *env) placeAt(offset time.Duration) time.Time {
	now := e.clock.Now()
	start := now.Truncate(time.Minute).Add(time.Minute)
	e.clock.Advance(start.Add(offset).Sub(now))
	return start.Add(time.Minute)
}

// rateHeaders is both header families of a response (ratelimittest.Headers).
func rateHeaders(t *testing.T, r response) string {
	t.Helper()
	return ratelimittest.Headers(t, r.status, r.header)
}

var windows = ratelimittest.Windows

// checkRefused asserts a 429 RATE_LIMITED problem whose Retry-After is the
// whole seconds from the request to reset, rounded up. The request ran
// between before and after (read from the node's clock).
func checkRefused(t *testing.T, step string, r response, before, after, reset time.Time) {
	t.Helper()
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("%s: status %d, want 429: %s", step, r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("%s: content type %q", step, ct)
	}
	if p := r.json(t); p["code"] != "RATE_LIMITED" || p["status"] != float64(429) {
		t.Errorf("%s: problem %s", step, r.body)
	}
	got, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil {
		t.Fatalf("%s: Retry-After %q", step, r.header.Get("Retry-After"))
	}
	lo, hi := ceilSeconds(reset.Sub(after)), ceilSeconds(reset.Sub(before))
	if got < lo || got > hi {
		t.Errorf("%s: Retry-After %d, want %d..%d (seconds to %v)", step, got, lo, hi, reset)
	}
}

func ceilSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

var smsBody = map[string]any{"to": "5511999990000", "message": "hi", "type": "SMS"}

// storm sends n requests at once, spread over the nodes, and counts the
// statuses.
func storm(t *testing.T, nodes []*env, n int, path, key string) map[int]int {
	t.Helper()
	// An own transport, closed afterwards: connections it dialled but never
	// used would otherwise hold the nodes' graceful shutdown for seconds.
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(e *env) {
			defer wg.Done()
			req, _ := http.NewRequest("GET", e.base+path, nil)
			req.Header.Set("X-API-KEY", key)
			<-start
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			counts[resp.StatusCode]++
			mu.Unlock()
		}(nodes[i%len(nodes)])
	}
	close(start)
	wg.Wait()
	return counts
}

func TestRateLimitConcurrentRequests(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	_, key := e.newAccount("basic", &domain.Limits{TierRPM: 20, SendRPM: 60, StatusRPM: 2000, MediaRPM: 60})
	e.placeAt(5 * time.Second)
	got := storm(t, []*env{e}, 50, "/api/v1/integration/balance", key)
	if got[200] != 20 || got[429] != 30 || len(got) != 2 {
		t.Errorf("50 concurrent requests against 20 per minute: %v, want 20 × 200 and 30 × 429", got)
	}
}

// forgetAccount deletes what a test left in the shared Redis.
func forgetAccount(t *testing.T, url string, accountIDs ...string) {
	t.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() {
		ctx := context.Background()
		defer c.Close()
		for _, id := range accountIDs {
			iter := c.Scan(ctx, 0, rlPrefix+"{"+id+"}*", 100).Iterator()
			for iter.Next(ctx) {
				c.Del(ctx, iter.Val())
			}
		}
	})
}

func TestRateLimitTwoNodesShareRedis(t *testing.T) {
	url := testRedisURL(t)
	dsn := storetest.Migrated(t, "sqlite")
	clk := &clock{}
	n1 := startNode(t, dsn, url, clk)
	n2 := startNode(t, dsn, url, clk)
	nodes := []*env{n1, n2}
	free, key := n1.newAccount("free", nil)
	burst, burstKey := n1.newAccount("basic", &domain.Limits{TierRPM: 20, SendRPM: 60, StatusRPM: 2000, MediaRPM: 60})
	forgetAccount(t, url, free.ID, burst.ID)
	reset := n1.placeAt(30 * time.Second)

	// Requests 1-5 and 8-10 are sends, alternating between the nodes; 6 and
	// 7 read the shared counts from either node.
	sends := 0
	for i := 1; i <= 10; i++ {
		e := nodes[i%2]
		switch i {
		case 6:
			lim := e.do("GET", "/api/v1/integration/limits", key, nil).json(t)["limits"].(map[string]any)
			if tier, sending := lim["tier"].(map[string]any), lim["sending"].(map[string]any); tier["remaining"] != float64(4) || sending["remaining"] != float64(55) {
				t.Errorf("limits as request 6: %v", lim)
			}
		case 7:
			r := e.do("GET", "/api/v1/integration/balance", key, nil)
			if got, want := rateHeaders(t, r), windows(3, 10, 3, 10, reset); got != want {
				t.Errorf("balance as request 7: headers %s, want %s", got, want)
			}
		default:
			r := send(t, e, key, smsBody)
			sends++
			if r.status != http.StatusAccepted {
				t.Fatalf("request %d on node %d: %d %s", i, i%2+1, r.status, r.body)
			}
			if got, want := rateHeaders(t, r), windows(10-i, 10, 60-sends, 60, reset); got != want {
				t.Errorf("request %d on node %d: headers %s, want %s", i, i%2+1, got, want)
			}
		}
	}
	for n, e := range nodes {
		before := clk.Now()
		checkRefused(t, fmt.Sprintf("request 11 on node %d", n+1), send(t, e, key, smsBody), before, clk.Now(), reset)
	}

	got := storm(t, nodes, 50, "/api/v1/integration/balance", burstKey)
	if got[200] != 20 || got[429] != 30 || len(got) != 2 {
		t.Errorf("50 concurrent requests on two nodes against 20 per minute: %v", got)
	}
}

// metricValue reads one unlabelled sample from a node's /metrics.
func metricValue(t *testing.T, e *env, name string) float64 {
	t.Helper()
	r := e.do("GET", "/metrics", "", nil)
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no %s in /metrics", name)
	return 0
}

func TestRateLimitFailsOpen(t *testing.T) {
	clk := &clock{}
	e := startNode(t, storetest.Migrated(t, "sqlite"), "redis://127.0.0.1:1/0", clk)
	acct, key := e.newAccount("free", nil)
	if acct.Limits != (domain.Limits{TierRPM: 10, SendRPM: 60, StatusRPM: 2000, MediaRPM: 60}) {
		t.Fatalf("free defaults %+v", acct.Limits)
	}
	reset := e.placeAt(15 * time.Second)
	const metric = "msgsvc_ratelimit_backend_errors_total"

	var slowest time.Duration
	for i := 1; i <= 12; i++ {
		start := time.Now()
		r := send(t, e, key, smsBody)
		slowest = max(slowest, time.Since(start))
		if r.status != http.StatusAccepted {
			t.Fatalf("send %d with the backend down: %d %s", i, r.status, r.body)
		}
		// Reported as untouched windows, as if nothing were counted.
		if got, want := rateHeaders(t, r), windows(10, 10, 60, 60, reset); got != want {
			t.Errorf("send %d: headers %s, want %s", i, got, want)
		}
	}
	t.Logf("slowest send with the backend down: %v", slowest)
	if n := metricValue(t, e, metric); n < 12 {
		t.Errorf("%s = %v after 12 requests failed open", metric, n)
	}
	before := metricValue(t, e, metric)
	if r := e.do("GET", "/api/v1/integration/limits", key, nil); r.status != http.StatusOK {
		t.Errorf("limits with the backend down: %d %s", r.status, r.body)
	}
	if after := metricValue(t, e, metric); after <= before {
		t.Errorf("%s did not grow (%v → %v)", metric, before, after)
	}

	ready := e.do("GET", "/readyz", "", nil)
	body := ready.json(t)
	if ready.status != http.StatusOK || body["status"] != "degraded" || !strings.Contains(fmt.Sprint(body["rateLimit"]), "failing open") {
		t.Errorf("/readyz with the backend down: %d %s", ready.status, ready.body)
	}
	// Failed authentications still carry both families, untouched.
	if r := e.do("GET", "/api/v1/integration/balance", "nope", nil); r.status != http.StatusUnauthorized ||
		rateHeaders(t, r) != windows(30, 30, 30, 30, reset) {
		t.Errorf("auth failure with the backend down: %d %s", r.status, rateHeaders(t, r))
	}
}

// BenchmarkSendLimiter measures what the limiter adds to a send through the
// real HTTP stack: the same node's services behind API servers that differ
// only in their limiter (none, in memory, Redis when configured). Run one
// variant per process (-bench 'SendLimiter/memory$') so each starts from an
// empty database.
func BenchmarkSendLimiter(b *testing.B) {
	benchLimiter(b, "POST", "/api/v1/integration/messages", `{"to":"5511999990000","message":"benchmark","type":"SMS"}`, http.StatusAccepted)
}

// BenchmarkBalanceLimiter is the same on a cheap read, where the limiter's
// share of the request is easier to see than beside a send's commit.
func BenchmarkBalanceLimiter(b *testing.B) {
	benchLimiter(b, "GET", "/api/v1/integration/balance", "", http.StatusOK)
}

func benchLimiter(b *testing.B, method, path, body string, status int) {
	dsn := storetest.Migrated(b, "sqlite")
	cfg := config.Config{Dev: true, DB: dsn, Addr: "127.0.0.1:0", WebhookAllowPrivate: true, SimulatorDelay: time.Hour,
		RateLimitBackend: "memory", NodeID: "bench", DispatchWorkers: 1, ShutdownTimeout: 5 * time.Second, LogLevel: "error"}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := NewServer(context.Background(), cfg, log, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })

	now := time.Now()
	acct, err := CreateAccount(ctx, srv.store, NewAccount{Name: "Bench", Tier: "enterprise", Currency: "USD", Country: "55"}, now)
	if err != nil {
		b.Fatal(err)
	}
	// Limits high enough that every request takes the counting path.
	if err := srv.store.SetLimits(ctx, acct.ID, domain.Limits{TierRPM: 1 << 30, SendRPM: 1 << 30, StatusRPM: 1 << 30, MediaRPM: 1 << 30}); err != nil {
		b.Fatal(err)
	}
	k, _, err := CreateKey(ctx, srv.store, acct.ID, "test", now)
	if err != nil {
		b.Fatal(err)
	}

	variants := []struct {
		name    string
		backend string // "" = no limiter
	}{
		{"off", ""},
		{"memory", "memory"},
		{"redis", os.Getenv(redisURLEnv)},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			c := api.Config{Store: srv.store, Messages: srv.messages, Sends: srv.sends, Replies: srv.tracker, Log: log}
			if v.name != "off" {
				if v.backend == "" {
					b.Skipf("%s is not set", redisURLEnv)
				}
				backend, closeRL, err := ratelimit.Open(v.backend, "msgsvc-bench:"+strconv.FormatInt(now.UnixNano(), 36)+":", nil)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = closeRL() })
				c.Limiter = ratelimit.FailOpen(backend, func(err error) { b.Errorf("backend failed: %v", err) })
				c.Guard = backend
			}
			hs := httptest.NewServer(api.New(c))
			defer hs.Close()
			do := func() {
				var rd io.Reader
				if body != "" {
					rd = strings.NewReader(body)
				}
				req, _ := http.NewRequest(method, hs.URL+path, rd)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-API-KEY", k.Secret)
				resp, err := hs.Client().Do(req)
				if err != nil {
					b.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != status {
					b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, got)
				}
			}
			do() // warm the connection and the key caches
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				do()
			}
		})
	}
}
