package api

import (
	"bytes"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/ratelimit/ratelimittest"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// The rate-limit headers, refusals and the limits endpoint, with the
// in-memory limiter on the harness's clock.

var smsBody = map[string]any{"to": "5511999990000", "message": "hi", "type": "SMS"}

// tierLimits is a tier's default limits, as a new account gets them.
func tierLimits(t *testing.T, tier string) domain.Limits {
	t.Helper()
	l, ok := manage.TierLimits(tier)
	if !ok {
		t.Fatalf("no tier %q", tier)
	}
	return l
}

func TestRateLimitFreeTier(t *testing.T) {
	h := newHarness(t)
	free := tierLimits(t, "free")
	if free != (domain.Limits{TierRPM: 10, SendRPM: 60, StatusRPM: 2000, MediaRPM: 60}) {
		t.Fatalf("free defaults %+v", free)
	}
	acct, key := h.newAccount("free", free)
	reset := h.clock.placeAt(30*time.Second + 900*time.Millisecond)
	h.msgs.put(scope(acct, domain.Test), domain.Message{ID: "msg_1", Status: domain.Sending})

	r := h.send(key, smsBody)
	if r.status != http.StatusAccepted {
		t.Fatalf("send: %d %s", r.status, r.body)
	}
	if got, want := rateHeaders(t, r), windows(9, 10, 59, 60, reset); got != want {
		t.Fatalf("request 1: headers %s, want %s", got, want)
	}
	sends, statuses := 1, 0
	for i := 2; i <= 10; i++ {
		var typeRem, typeLim int
		switch i % 3 {
		case 0:
			r = h.send(key, smsBody)
			sends++
			typeRem, typeLim = 60-sends, 60
		case 1:
			r = h.do("GET", "/api/v1/integration/messages/msg_1", key, nil)
			statuses++
			typeRem, typeLim = 2000-statuses, 2000
		default:
			// No type: the RateLimit-* family repeats the tier window.
			r = h.do("GET", balancePath, key, nil)
			typeRem, typeLim = 10-i, 10
		}
		if r.status >= 300 {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
		if got, want := rateHeaders(t, r), windows(10-i, 10, typeRem, typeLim, reset); got != want {
			t.Errorf("request %d: headers %s, want %s", i, got, want)
		}
	}

	r = h.send(key, smsBody)
	h.checkRefused("request 11", r, reset)
	// The refused send consumed nothing from the sending window either.
	if got, want := rateHeaders(t, r), windows(0, 10, 60-sends, 60, reset); got != want {
		t.Errorf("request 11: headers %s, want %s", got, want)
	}
	if n := h.msgs.sent(); n != sends {
		t.Errorf("%d sends reached the service, want %d", n, sends)
	}
	r = h.do("GET", balancePath, key, nil)
	h.checkRefused("request 12", r, reset)
	if got, want := rateHeaders(t, r), windows(0, 10, 0, 10, reset); got != want {
		t.Errorf("request 12: headers %s, want %s", got, want)
	}

	// At the boundary the next window opens in full.
	h.clock.Advance(reset.Sub(h.clock.Now()))
	r = h.send(key, smsBody)
	if r.status != http.StatusAccepted {
		t.Fatalf("after the boundary: %d %s", r.status, r.body)
	}
	if got, want := rateHeaders(t, r), windows(9, 10, 59, 60, reset.Add(time.Minute)); got != want {
		t.Errorf("after the boundary: headers %s, want %s", got, want)
	}
}

func TestRateLimitTypeWindow(t *testing.T) {
	h := newHarness(t)
	_, key := h.newAccount("pro", domain.Limits{TierRPM: 100, SendRPM: 3, StatusRPM: 2000, MediaRPM: 60})
	reset := h.clock.placeAt(12 * time.Second)

	for i := 1; i <= 3; i++ {
		r := h.send(key, smsBody)
		if r.status != http.StatusAccepted {
			t.Fatalf("send %d: %d %s", i, r.status, r.body)
		}
		if got, want := rateHeaders(t, r), windows(100-i, 100, 3-i, 3, reset); got != want {
			t.Errorf("send %d: headers %s, want %s", i, got, want)
		}
	}
	tierUsed := 3
	for i := 4; i <= 6; i++ {
		r := h.send(key, smsBody)
		h.checkRefused(fmt.Sprintf("send %d", i), r, reset)
		// Refused sends leave the tier window where it was.
		if got, want := rateHeaders(t, r), windows(100-tierUsed, 100, 0, 3, reset); got != want {
			t.Errorf("send %d: headers %s, want %s", i, got, want)
		}
		r = h.do("GET", balancePath, key, nil)
		tierUsed++
		if r.status != http.StatusOK {
			t.Fatalf("balance while sending is exhausted: %d %s", r.status, r.body)
		}
		if got, want := rateHeaders(t, r), windows(100-tierUsed, 100, 100-tierUsed, 100, reset); got != want {
			t.Errorf("balance after send %d: headers %s, want %s", i, got, want)
		}
	}
	// Cancels share the sending window.
	h.checkRefused("cancel", h.do("POST", "/api/v1/integration/messages/msg_none/cancel", key, nil), reset)
}

func TestRateLimitHeadersOnErrors(t *testing.T) {
	h := newHarness(t)
	_, key := h.newAccount("free", tierLimits(t, "free"))
	reset := h.clock.placeAt(5 * time.Second)
	cases := []struct {
		name           string
		method, path   string
		body           any
		refuse         error // what the send answers
		status         int
		typeRem, typeN int // the type window after the request; typeN 0 = no type
	}{
		{"validation error", "POST", "/api/v1/integration/messages", map[string]any{"to": "12ab", "message": "hi", "type": "SMS"},
			&domain.ValidationError{Fields: []domain.FieldError{{Field: "to", Message: "is not a phone number"}}}, 400, 59, 60},
		{"malformed JSON", "POST", "/api/v1/integration/messages", "{", nil, 400, 58, 60},
		{"unknown message", "GET", "/api/v1/integration/messages/msg_nope", nil, nil, 404, 1999, 2000},
		{"unknown campaign", "GET", "/api/v1/integration/campaigns/cmp_nope", nil, nil, 404, 1998, 2000},
		{"cancel unknown", "POST", "/api/v1/integration/messages/msg_nope/cancel", nil, nil, 404, 57, 60},
		{"unknown path", "GET", "/api/v1/integration/nope", nil, nil, 404, 0, 0},
	}
	for i, c := range cases {
		if c.refuse != nil {
			h.msgs.refuse(c.refuse)
		}
		r := h.do(c.method, c.path, key, c.body)
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
	h := newHarness(t)
	reset := h.clock.placeAt(20 * time.Second)
	cases := []struct {
		name   string
		limits domain.Limits
		method string
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
		_, key := h.newAccount("enterprise", c.limits)
		var r response
		if c.method == "POST" {
			r = h.send(key, smsBody)
		} else {
			r = h.do("GET", balancePath, key, nil)
		}
		if r.status >= 300 {
			t.Fatalf("%s: %d %s", c.name, r.status, r.body)
		}
		if got := rateHeaders(t, r); got != c.want {
			t.Errorf("%s: headers %s, want %s", c.name, got, c.want)
		}
	}
	// Without a limiter nothing limits any request, which Limit 0 says.
	bare := newHarness(t, func(c *Config) { c.Limiter, c.Guard = nil, nil })
	reset = bare.clock.Now().Truncate(time.Minute).Add(time.Minute)
	for _, key := range []string{bare.testKey, ""} {
		if got, want := rateHeaders(t, bare.do("GET", balancePath, key, nil)), windows(0, 0, 0, 0, reset); got != want {
			t.Errorf("no limiter, key %q: headers %s, want %s", key, got, want)
		}
	}
}

func TestLimitsEndpoint(t *testing.T) {
	h := newHarness(t)
	_, key := h.newAccount("free", tierLimits(t, "free"))
	reset := h.clock.placeAt(40 * time.Second)
	for i := 0; i < 2; i++ {
		if r := h.send(key, smsBody); r.status != http.StatusAccepted {
			t.Fatalf("send: %d %s", r.status, r.body)
		}
	}
	h.do("GET", "/api/v1/integration/messages/msg_nope", key, nil)

	r := h.do("GET", "/api/v1/integration/limits", key, nil)
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
	acct2, key2 := h.newAccount("basic", domain.Limits{TierRPM: 1000, SendRPM: 0, StatusRPM: 5000, MediaRPM: 100})
	body := h.do("GET", "/api/v1/integration/limits", key2, nil).json(t)
	lim := body["limits"].(map[string]any)
	if body["tier"] != "basic" || fmt.Sprint(lim["tier"].(map[string]any)["limit"], lim["sending"].(map[string]any)["limit"],
		lim["status"].(map[string]any)["limit"], lim["media"].(map[string]any)["remaining"]) != "1000 0 5000 100" {
		t.Errorf("limits of %s: %v", acct2.ID, body)
	}
	checkProblem(t, "limits without a key", h.do("GET", "/api/v1/integration/limits", "", nil), http.StatusUnauthorized, "MISSING_API_KEY")
}

func TestRateLimitAuthFailures(t *testing.T) {
	h := newHarness(t)
	reset := h.clock.placeAt(10 * time.Second)
	// The test key has worked from this address; the live key has not.
	if r := h.do("GET", balancePath, h.testKey, nil); r.status != http.StatusOK {
		t.Fatalf("known key: %d %s", r.status, r.body)
	}
	bad := []string{"", "nope", "svc_test_" + strings.Repeat("a", 40), "svc_live_" + strings.Repeat("B", 40)}
	for i := 1; i <= 30; i++ {
		r := h.do("GET", balancePath, bad[i%len(bad)], nil)
		if r.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d %s", i, r.status, r.body)
		}
		// Both families describe the address's failure window.
		if got, want := rateHeaders(t, r), windows(30-i, 30, 30-i, 30, reset); got != want {
			t.Fatalf("failure %d: headers %s, want %s", i, got, want)
		}
	}
	for _, k := range bad {
		r := h.do("GET", balancePath, k, nil)
		h.checkRefused(fmt.Sprintf("bad key %q after 30 failures", k), r, reset)
		if got, want := rateHeaders(t, r), windows(0, 30, 0, 30, reset); got != want {
			t.Errorf("bad key %q: headers %s, want %s", k, got, want)
		}
	}
	// A valid key is never refused for other requests' failures (a failed
	// guess must not lock out the integrator who holds the key): not the
	// key that worked here before, not a key new to this address. Behind a
	// proxy every client shares one address.
	for _, k := range []string{h.testKey, h.liveKey} {
		if r := h.do("GET", balancePath, k, nil); r.status != http.StatusOK {
			t.Errorf("valid key during the failure lock-out: %d %s", r.status, r.body)
		}
	}
	// Another address has a window of its own.
	h.remoteAddr = "127.0.0.2:40000"
	if r := h.do("GET", balancePath, bad[1], nil); r.status != http.StatusUnauthorized || rateHeaders(t, r) != windows(29, 30, 29, 30, reset) {
		t.Errorf("failure from another address: %d %s", r.status, rateHeaders(t, r))
	}
	h.remoteAddr = "127.0.0.1:40000"
	// Failures stay refused until the window ends.
	h.checkRefused("a guess during the lock-out", h.do("GET", balancePath, bad[2], nil), reset)
	h.clock.Advance(reset.Sub(h.clock.Now()))
	if r := h.do("GET", balancePath, bad[1], nil); r.status != http.StatusUnauthorized || rateHeaders(t, r) != windows(29, 30, 29, 30, reset.Add(time.Minute)) {
		t.Errorf("failure after the window: %d %s", r.status, rateHeaders(t, r))
	}
}

func TestRateLimitConcurrentRequests(t *testing.T) {
	h := newHarness(t)
	_, key := h.newAccount("basic", domain.Limits{TierRPM: 20, SendRPM: 60, StatusRPM: 2000, MediaRPM: 60})
	h.clock.placeAt(5 * time.Second)
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := h.do("GET", balancePath, key, nil)
			mu.Lock()
			got[r.status]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	if got[200] != 20 || got[429] != 30 || len(got) != 2 {
		t.Errorf("50 concurrent requests against 20 per minute: %v, want 20 × 200 and 30 × 429", got)
	}
}

// rateHeaders is both header families of a response (ratelimittest.Headers).
func rateHeaders(t *testing.T, r response) string {
	t.Helper()
	return ratelimittest.Headers(t, r.status, r.header)
}

var windows = ratelimittest.Windows

// checkRefused asserts a 429 RATE_LIMITED problem whose Retry-After is the
// whole seconds from now to reset, rounded up.
func (h *harness) checkRefused(step string, r response, reset time.Time) {
	h.t.Helper()
	checkProblem(h.t, step, r, http.StatusTooManyRequests, "RATE_LIMITED")
	want := max(1, int(math.Ceil(reset.Sub(h.clock.Now()).Seconds())))
	if got := r.header.Get("Retry-After"); got != strconv.Itoa(want) {
		h.t.Errorf("%s: Retry-After %q, want %d (seconds to %v)", step, got, want, reset)
	}
}
