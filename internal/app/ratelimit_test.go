package app

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
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
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("node stopped with %v", err)
		}
	})
	return &env{t: t, srv: srv, st: srv.Store(), base: "http://" + srv.Addr(), clock: clk, client: &http.Client{}}
}

// newAccount creates an account of tier with a test key; limits nil keeps
// the tier's defaults.
func (e *env) newAccount(tier string, limits *domain.Limits) (domain.Account, string) {
	e.t.Helper()
	ctx := context.Background()
	now := e.clock.Now()
	a, err := CreateAccount(ctx, e.st, NewAccount{Name: "RL " + tier, Tier: tier, Credits: 100, Currency: "USD", Country: "55"}, now)
	if err != nil {
		e.t.Fatal(err)
	}
	if limits != nil {
		if err := e.st.SetLimits(ctx, a.ID, *limits); err != nil {
			e.t.Fatal(err)
		}
		a.Limits = *limits
	}
	k, _, err := CreateKey(ctx, e.st, a.ID, "test", now)
	if err != nil {
		e.t.Fatal(err)
	}
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

// rateHeaders is both header families of a response, as
// "tierRemaining/tierLimit@reset type typeRemaining/typeLimit@reset".
func rateHeaders(t *testing.T, r response) string {
	t.Helper()
	names := []string{"X-RateLimit-Remaining", "X-RateLimit-Limit", "X-RateLimit-Reset",
		"RateLimit-Remaining", "RateLimit-Limit", "RateLimit-Reset"}
	v := make([]any, len(names))
	for i, n := range names {
		if v[i] = r.header.Get(n); v[i] == "" {
			t.Fatalf("%d response without %s: %v", r.status, n, r.header)
		}
	}
	return fmt.Sprintf("%s/%s@%s type %s/%s@%s", v...)
}

func windows(tierRem, tierLim, typeRem, typeLim int, reset time.Time) string {
	return fmt.Sprintf("%d/%d@%d type %d/%d@%d", tierRem, tierLim, reset.Unix(), typeRem, typeLim, reset.Unix())
}

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

func TestRateLimitFreeTier(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	acct, key := e.newAccount("free", nil)
	if acct.Limits != (domain.Limits{TierRPM: 10, SendRPM: 60, StatusRPM: 2000, MediaRPM: 60}) {
		t.Fatalf("free defaults %+v", acct.Limits)
	}
	reset := e.placeAt(30*time.Second + 900*time.Millisecond)

	// A send first, so that a status query has a message to read.
	r := send(t, e, key, smsBody)
	if r.status != http.StatusAccepted {
		t.Fatalf("send: %d %s", r.status, r.body)
	}
	msgID := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
	if got, want := rateHeaders(t, r), windows(9, 10, 59, 60, reset); got != want {
		t.Fatalf("request 1: headers %s, want %s", got, want)
	}
	sends, statuses := 1, 0
	for i := 2; i <= 10; i++ {
		var typeRem, typeLim int
		switch i % 3 {
		case 0:
			r = send(t, e, key, smsBody)
			sends++
			typeRem, typeLim = 60-sends, 60
		case 1:
			r = e.do("GET", "/api/v1/integration/messages/"+msgID, key, nil)
			statuses++
			typeRem, typeLim = 2000-statuses, 2000
		default:
			// No type: the RateLimit-* family repeats the tier window.
			r = e.do("GET", "/api/v1/integration/balance", key, nil)
			typeRem, typeLim = 10-i, 10
		}
		if r.status >= 300 {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
		if got, want := rateHeaders(t, r), windows(10-i, 10, typeRem, typeLim, reset); got != want {
			t.Errorf("request %d: headers %s, want %s", i, got, want)
		}
	}

	before := e.clock.Now()
	r = send(t, e, key, smsBody)
	checkRefused(t, "request 11", r, before, e.clock.Now(), reset)
	// The refused send consumed nothing from the sending window either.
	if got, want := rateHeaders(t, r), windows(0, 10, 60-sends, 60, reset); got != want {
		t.Errorf("request 11: headers %s, want %s", got, want)
	}
	before = e.clock.Now()
	r = e.do("GET", "/api/v1/integration/balance", key, nil)
	checkRefused(t, "request 12", r, before, e.clock.Now(), reset)
	if got, want := rateHeaders(t, r), windows(0, 10, 0, 10, reset); got != want {
		t.Errorf("request 12: headers %s, want %s", got, want)
	}

	// At the boundary the next window opens in full.
	e.clock.Advance(reset.Sub(e.clock.Now()))
	r = send(t, e, key, smsBody)
	if r.status != http.StatusAccepted {
		t.Fatalf("after the boundary: %d %s", r.status, r.body)
	}
	if got, want := rateHeaders(t, r), windows(9, 10, 59, 60, reset.Add(time.Minute)); got != want {
		t.Errorf("after the boundary: headers %s, want %s", got, want)
	}
}

func TestRateLimitTypeWindow(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	_, key := e.newAccount("pro", &domain.Limits{TierRPM: 100, SendRPM: 3, StatusRPM: 2000, MediaRPM: 60})
	reset := e.placeAt(12 * time.Second)

	for i := 1; i <= 3; i++ {
		r := send(t, e, key, smsBody)
		if r.status != http.StatusAccepted {
			t.Fatalf("send %d: %d %s", i, r.status, r.body)
		}
		if got, want := rateHeaders(t, r), windows(100-i, 100, 3-i, 3, reset); got != want {
			t.Errorf("send %d: headers %s, want %s", i, got, want)
		}
	}
	tierUsed := 3
	for i := 4; i <= 6; i++ {
		before := e.clock.Now()
		r := send(t, e, key, smsBody)
		checkRefused(t, fmt.Sprintf("send %d", i), r, before, e.clock.Now(), reset)
		// Refused sends leave the tier window where it was.
		if got, want := rateHeaders(t, r), windows(100-tierUsed, 100, 0, 3, reset); got != want {
			t.Errorf("send %d: headers %s, want %s", i, got, want)
		}
		r = e.do("GET", "/api/v1/integration/balance", key, nil)
		tierUsed++
		if r.status != http.StatusOK {
			t.Fatalf("balance while sending is exhausted: %d %s", r.status, r.body)
		}
		if got, want := rateHeaders(t, r), windows(100-tierUsed, 100, 100-tierUsed, 100, reset); got != want {
			t.Errorf("balance after send %d: headers %s, want %s", i, got, want)
		}
	}
	// Cancels share the sending window.
	before := e.clock.Now()
	checkRefused(t, "cancel", e.do("POST", "/api/v1/integration/messages/msg_none/cancel", key, nil), before, e.clock.Now(), reset)
}

func TestRateLimitHeadersOnErrors(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	_, key := e.newAccount("free", nil)
	reset := e.placeAt(5 * time.Second)
	cases := []struct {
		name           string
		method, path   string
		body           any
		status         int
		typeRem, typeN int // the type window after the request; typeN 0 = no type
	}{
		{"validation error", "POST", "/api/v1/integration/messages", map[string]any{"to": "12ab", "message": "hi", "type": "SMS"}, 400, 59, 60},
		{"malformed JSON", "POST", "/api/v1/integration/messages", "{", 400, 58, 60},
		{"unknown message", "GET", "/api/v1/integration/messages/msg_nope", nil, 404, 1999, 2000},
		{"unknown campaign", "GET", "/api/v1/integration/campaigns/cmp_nope", nil, 404, 1998, 2000},
		{"cancel unknown", "POST", "/api/v1/integration/messages/msg_nope/cancel", nil, 404, 57, 60},
		{"unknown path", "GET", "/api/v1/integration/nope", nil, 404, 0, 0},
	}
	for i, c := range cases {
		r := e.do(c.method, c.path, key, c.body)
		if r.status != c.status {
			t.Fatalf("%s: status %d, want %d: %s", c.name, r.status, c.status, r.body)
		}
		tierRem := 10 - (i + 1)
		typeRem, typeN := c.typeRem, c.typeN
		if typeN == 0 {
			typeRem, typeN = tierRem, 10
		}
		if got, want := rateHeaders(t, r), windows(tierRem, 10, typeRem, typeN, reset); got != want {
			t.Errorf("%s: headers %s, want %s", c.name, got, want)
		}
	}
}

func TestRateLimitUnlimitedWindows(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	reset := e.placeAt(20 * time.Second)
	cases := []struct {
		name   string
		limits domain.Limits
		path   string
		want   string
	}{
		// An unlimited window shows the other one, so either family alone
		// names what can refuse the request.
		{"unlimited type shows the tier", domain.Limits{TierRPM: 10}, "POST", windows(9, 10, 9, 10, reset)},
		{"unlimited tier shows the type", domain.Limits{SendRPM: 5}, "POST", windows(4, 5, 4, 5, reset)},
		{"nothing limits the request", domain.Limits{SendRPM: 5}, "GET", windows(0, 0, 0, 0, reset)},
		{"both limited", domain.Limits{TierRPM: 10, SendRPM: 5}, "POST", windows(9, 10, 4, 5, reset)},
	}
	for _, c := range cases {
		_, key := e.newAccount("enterprise", &c.limits)
		var r response
		if c.path == "POST" {
			r = send(t, e, key, smsBody)
		} else {
			r = e.do("GET", "/api/v1/integration/balance", key, nil)
		}
		if r.status >= 300 {
			t.Fatalf("%s: %d %s", c.name, r.status, r.body)
		}
		if got := rateHeaders(t, r); got != c.want {
			t.Errorf("%s: headers %s, want %s", c.name, got, c.want)
		}
	}
}

func TestLimitsEndpoint(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	_, key := e.newAccount("free", nil)
	reset := e.placeAt(40 * time.Second)
	for i := 0; i < 2; i++ {
		if r := send(t, e, key, smsBody); r.status != http.StatusAccepted {
			t.Fatalf("send: %d %s", r.status, r.body)
		}
	}
	e.do("GET", "/api/v1/integration/messages/msg_nope", key, nil)

	r := e.do("GET", "/api/v1/integration/limits", key, nil)
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("limits: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	// The call itself counts against the tier window only.
	if got, want := rateHeaders(t, r), windows(6, 10, 6, 10, reset); got != want {
		t.Errorf("headers %s, want %s", got, want)
	}
	at := reset.UTC().Format("2006-01-02T15:04:05.000Z")
	want := fmt.Sprintf(`{"tier":"free","limits":{"tier":{"limit":10,"remaining":6,"reset":%[1]q},`+
		`"sending":{"limit":60,"remaining":58,"reset":%[1]q},"status":{"limit":2000,"remaining":1999,"reset":%[1]q},`+
		`"media":{"limit":60,"remaining":60,"reset":%[1]q}}}`, at)
	if got := string(bytes.TrimSpace(r.body)); got != want {
		t.Errorf("body\n got  %s\n want %s", got, want)
	}
	if !tsRe.MatchString(at) {
		t.Errorf("reset %q is not the contract's timestamp format", at)
	}

	// An approved increase shows at once; unlimited windows read 0.
	acct2, key2 := e.newAccount("basic", &domain.Limits{TierRPM: 1000, SendRPM: 0, StatusRPM: 5000, MediaRPM: 100})
	body := e.do("GET", "/api/v1/integration/limits", key2, nil).json(t)
	lim := body["limits"].(map[string]any)
	if body["tier"] != "basic" || fmt.Sprint(lim["tier"].(map[string]any)["limit"], lim["sending"].(map[string]any)["limit"],
		lim["status"].(map[string]any)["limit"], lim["media"].(map[string]any)["remaining"]) != "1000 0 5000 100" {
		t.Errorf("limits of %s: %v", acct2.ID, body)
	}
	if r := e.do("GET", "/api/v1/integration/limits", "", nil); r.status != http.StatusUnauthorized {
		t.Errorf("limits without a key: %d", r.status)
	}
}

func TestRateLimitAuthFailures(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	reset := e.placeAt(10 * time.Second)
	balance := "/api/v1/integration/balance"
	// The env's test key has worked from this address; the live key has not.
	if r := e.do("GET", balance, e.testKey, nil); r.status != http.StatusOK {
		t.Fatalf("known key: %d %s", r.status, r.body)
	}
	bad := []string{"", "nope", "svc_test_" + strings.Repeat("a", 40), "svc_live_" + strings.Repeat("B", 40)}
	for i := 1; i <= 30; i++ {
		r := e.do("GET", balance, bad[i%len(bad)], nil)
		if r.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d %s", i, r.status, r.body)
		}
		// Both families describe the address's failure window.
		if got, want := rateHeaders(t, r), windows(30-i, 30, 30-i, 30, reset); got != want {
			t.Fatalf("failure %d: headers %s, want %s", i, got, want)
		}
	}
	for _, k := range bad {
		before := e.clock.Now()
		r := e.do("GET", balance, k, nil)
		checkRefused(t, fmt.Sprintf("bad key %q after 30 failures", k), r, before, e.clock.Now(), reset)
		if got, want := rateHeaders(t, r), windows(0, 30, 0, 30, reset); got != want {
			t.Errorf("bad key %q: headers %s, want %s", k, got, want)
		}
	}
	// A valid key is never refused for other requests' failures (a failed
	// guess must not lock out the integrator who holds the key): not the key that worked here before, not a key new to
	// this address. Behind a proxy every client shares one address.
	for _, k := range []string{e.testKey, e.liveKey} {
		if r := e.do("GET", balance, k, nil); r.status != http.StatusOK {
			t.Errorf("valid key during the failure lock-out: %d %s", r.status, r.body)
		}
	}
	// Failures stay refused until the window ends.
	before := e.clock.Now()
	checkRefused(t, "a guess during the lock-out", e.do("GET", balance, bad[2], nil), before, e.clock.Now(), reset)
	e.clock.Advance(reset.Sub(e.clock.Now()))
	if r := e.do("GET", balance, bad[1], nil); r.status != http.StatusUnauthorized || rateHeaders(t, r) != windows(29, 30, 29, 30, reset.Add(time.Minute)) {
		t.Errorf("failure after the window: %d %s", r.status, rateHeaders(t, r))
	}
}

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
	dsn := storetest.DSN(t, "sqlite")
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
	e := startNode(t, storetest.DSN(t, "sqlite"), "redis://127.0.0.1:1/0", clk)
	_, key := e.newAccount("free", nil)
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
	dsn := storetest.DSN(b, "sqlite")
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
			c := api.Config{Store: srv.store, Messages: srv.messages, Replies: srv.tracker, Log: log}
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
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != status {
					b.Fatalf("%s %s: %d", method, path, resp.StatusCode)
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
