package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

const (
	redisRequests = 500
	redisSenders  = 4
	redisPace     = 100 * time.Millisecond // per integrator: about 40 sends a second in all
	// redisDown is how long each outage lasts at least: two cooldowns of
	// the limiter's breaker (1 s), so that a hung server is asked again.
	redisDown = 2500 * time.Millisecond
	// redisSlowest bounds a send while Redis is away. Failing open costs
	// at most a 250 ms dial or read timeout and one retry, once per second
	// of outage; go-redis's own defaults (5 s dial, 3 s read, 3 retries)
	// would cost a hung server's requests 10 s and more.
	redisSlowest = 5 * time.Second
)

// phase names a stretch of the Redis-outage test.
type phase int32

const (
	redisUp phase = iota
	redisKilled
	redisRestarted
	redisHung
	redisWoken
	phases
)

var phaseNames = [phases]string{"up", "killed", "restarted", "hung (SIGSTOP)", "woken (SIGCONT)"}

// limiterWatch sorts the answers of each phase: counted by the limiter
// (remaining below the limit) or untouched (failing open), refused, and
// how long they took.
type limiterWatch struct {
	now atomic.Int32 // the current phase

	mu        sync.Mutex
	counted   [phases]int
	untouched [phases]int
	other     [phases][]string
	took      [phases][]time.Duration
}

func (w *limiterWatch) set(p phase) { w.now.Store(int32(p)) }

func (w *limiterWatch) observe(code int, h http.Header, took time.Duration) {
	p := w.now.Load()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.took[p] = append(w.took[p], took)
	limit, remaining := h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining")
	switch {
	case code != http.StatusAccepted:
		w.other[p] = append(w.other[p], fmt.Sprintf("%d", code))
	case limit == "" || remaining == "":
		w.other[p] = append(w.other[p], "202 without rate-limit headers")
	case remaining == limit:
		w.untouched[p]++
	default:
		w.counted[p]++
	}
}

func (w *limiterWatch) count(p phase) (counted, untouched int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counted[p], w.untouched[p]
}

// figures reports a phase's answers and their latency.
func (w *limiterWatch) figures(p phase) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := slices.Clone(w.took[p])
	slices.Sort(d)
	if len(d) == 0 {
		return phaseNames[p] + ": no answers"
	}
	q := func(f float64) time.Duration { return d[min(len(d)-1, int(f*float64(len(d))))].Round(time.Millisecond) }
	return fmt.Sprintf("%s: %d answers (%d counted, %d failing open), p50 %v, p99 %v, slowest %v",
		phaseNames[p], len(d), w.counted[p], w.untouched[p], q(0.5), q(0.99), d[len(d)-1].Round(time.Millisecond))
}

// refused lists the answers of a phase that were not a 202 with both
// headers.
func (w *limiterWatch) refused(p phase) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.other[p])
}

func (w *limiterWatch) slowest(p phase) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Max(append(w.took[p], 0))
}

// TestRedisDown runs a node whose rate limits live in a private Redis,
// under a paced load of live sends, and takes Redis away twice: killed
// with SIGKILL and started again on the same port, then hung with SIGSTOP
// (connections open, nothing answered) and woken with SIGCONT. As the
// README promises, rate limits fail open: no send is refused or fails
// while Redis is away, their headers show untouched windows, /readyz says
// "degraded", and the sends stay fast. Once Redis is back the windows are
// counted again without a restart of the node. Afterwards every check of
// the kill test holds.
func TestRedisDown(t *testing.T) {
	needBinary(t)
	rp := startRedisPeer(t)
	ctx := t.Context()
	dsn := storetest.DSN(t, "sqlite")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d; private redis-server on port %d", seed, rp.port)
	acc := bootstrap(ctx, t, dsn, "live")
	// Finite limits, so that every send is counted while Redis is there.
	runCLI(ctx, t, "account", "limits", "--db", dsn, "--account", acc.ID, "--tier-rpm", "1000000", "--send-rpm", "1000000",
		"--status-rpm", "1000000", "--json")
	rcv := newReceiver(t, acc.WebhookSecret, receiverRefuses, 3, seed)
	reqs := loadRequests(seed, redisRequests, "redis outage", rcv.URL)
	env := append(slices.Clone(crashServeEnv), "MSGSVC_RATE_LIMIT_BACKEND="+rp.URL())
	srv := startDev(ctx, t, dsn, t.TempDir(), env...)
	to := newTarget(newAPIClient(srv.URL, acc.Key))
	book := newSendBook()
	watch := &limiterWatch{}
	in := startIntegrators(ctx, reqs, to, book, loadOptions{senders: redisSenders, keyBase: fmt.Sprintf("redis-%d", seed),
		pace: redisPace, observe: watch.observe})

	// Each step waits, with a deadline, for what its phase must show.
	await := func(what string, cond func() bool) {
		t.Helper()
		if !waitFor(ctx, 60*time.Second, cond) {
			_, summary := in.report()
			t.Fatalf("%s: not within 60 s (%s)", what, summary)
		}
	}
	counting := func(p phase) func() bool {
		return func() bool { c, _ := watch.count(p); return c >= 10 }
	}
	away := func(p phase, since time.Time) func() bool {
		return func() bool { _, u := watch.count(p); return u >= 20 && time.Since(since) >= redisDown }
	}
	await("sends counted in Redis", counting(redisUp))

	rp.kill()
	killed := time.Now()
	watch.set(redisKilled)
	await("sends failing open with Redis killed", away(redisKilled, killed))
	checkDegraded(ctx, t, to.get(), true)

	rp.start()
	watch.set(redisRestarted)
	await("sends counted again once Redis is back", counting(redisRestarted))
	checkDegraded(ctx, t, to.get(), false)

	rp.signal(syscall.SIGSTOP)
	hung := time.Now()
	watch.set(redisHung)
	await("sends failing open with Redis hung", away(redisHung, hung))
	checkDegraded(ctx, t, to.get(), true)

	rp.signal(syscall.SIGCONT)
	woken := time.Now()
	watch.set(redisWoken)
	await("sends counted again once Redis answers", counting(redisWoken))

	if !in.wait(2 * time.Minute) {
		t.Fatal("the integrators were still sending 2 minutes after Redis came back")
	}
	problems, summary := in.report()
	report(t, problems)
	t.Log(summary)
	if n := in.retries.Load(); n > 0 {
		t.Errorf("%d sends had to be retried: a Redis outage must cost an integrator nothing", n)
	}
	for p := range phases {
		t.Log(watch.figures(p))
		if o := watch.refused(p); len(o) > 0 {
			t.Errorf("%s: %d answers were not a counted or failing-open 202: %v", phaseNames[p], len(o), o[:min(len(o), 10)])
		}
	}
	for _, p := range []phase{redisKilled, redisHung} {
		if d := watch.slowest(p); d > redisSlowest {
			t.Errorf("%s: the slowest send took %v; failing open must be quick (bound %v)", phaseNames[p], d, redisSlowest)
		}
	}
	t.Logf("msgsvc_ratelimit_backend_errors_total = %v", metric(ctx, t, to.get(), "msgsvc_ratelimit_backend_errors_total"))
	audit(ctx, t, dsn, acc, to.get(), rcv, book, woken)
	if code := srv.Stop(t, 20*time.Second); code != 0 {
		t.Errorf("msgsvc exited %d after SIGTERM, want 0:\n%s", code, srv.logs.tail(40))
	}
}

// checkDegraded asserts what /readyz says of the rate-limit backend; a
// backend that just came back may need a moment to be found answering.
func checkDegraded(ctx context.Context, t *testing.T, api *apiClient, degraded bool) {
	t.Helper()
	var code int
	var body map[string]any
	ok := waitFor(ctx, 10*time.Second, func() bool {
		code, body = readyz(ctx, t, api)
		failing := strings.Contains(fmt.Sprint(body["rateLimit"]), "failing open")
		return code == http.StatusOK && failing == degraded && (body["status"] == "degraded") == degraded
	})
	if !ok {
		t.Errorf("/readyz with the rate-limit backend %s: %d %v", map[bool]string{true: "away", false: "back"}[degraded], code, body)
	}
}

// metric reads one unlabelled sample from a node's /metrics.
func metric(ctx context.Context, t *testing.T, api *apiClient, name string) float64 {
	t.Helper()
	code, raw, err := api.do(ctx, http.MethodGet, "/metrics", nil)
	if err != nil || code != http.StatusOK {
		t.Fatalf("/metrics: %d %v", code, err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return f
		}
	}
	t.Fatalf("no %s in /metrics", name)
	return 0
}
