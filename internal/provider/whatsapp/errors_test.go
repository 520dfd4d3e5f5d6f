package whatsapp

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/whatsapp/whatsapptest"
)

func text() []provider.Outbound {
	return []provider.Outbound{{ID: "msg_1", AccountID: "acc_1", To: "5511999990000", Body: "hi"}}
}

// Each answer of the platform becomes its errorCode; transient errors and
// rate limits are tried again with backoff, refusals and a dead token not.
func TestErrorMapping(t *testing.T) {
	cases := []struct {
		name      string
		status    int
		body      string
		code      string
		temporary bool
		attempts  int
	}{
		{"outside the 24-hour window", 400, whatsapptest.Error(131047, "Re-engagement message"), domain.CodeOutsideWindow, false, 1},
		{"not on WhatsApp", 400, whatsapptest.Error(131026, "Message Undeliverable"), domain.CodeInvalidNumber, false, 1},
		{"marketing opt-out", 400, whatsapptest.Error(131050, "User stopped marketing messages"), domain.CodeMarketingOptedOut, false, 1},
		{"not delivered by Meta", 400, whatsapptest.Error(131049, "Meta chose not to deliver"), domain.CodeUndelivered, false, 1},
		{"template missing", 404, whatsapptest.Error(132001, "Template name does not exist in the translation"), domain.CodeTemplateError, false, 1},
		{"template parameters", 400, whatsapptest.Error(132000, "Number of parameters does not match"), domain.CodeTemplateError, false, 1},
		{"media download", 400, whatsapptest.Error(131052, "Media download error"), domain.CodeMediaError, false, 1},
		{"invalid parameter", 400, whatsapptest.Error(100, "Invalid parameter"), domain.CodeRejected, false, 1},
		{"recipient not allowed", 400, whatsapptest.Error(131030, "Recipient phone number not in allowed list"), domain.CodeRejected, false, 1},
		{"throughput limit", 400, whatsapptest.Error(130429, "Rate limit hit"), domain.CodeProviderError, true, 3},
		{"pair rate limit", 400, whatsapptest.Error(131056, "Pair rate limit hit"), domain.CodeProviderError, true, 3},
		{"account rate limit", 400, whatsapptest.Error(80007, "Rate limit issues"), domain.CodeProviderError, true, 3},
		{"HTTP 429", 429, `{}`, domain.CodeProviderError, true, 3},
		{"service unavailable", 503, whatsapptest.Error(131016, "Service unavailable"), domain.CodeProviderError, true, 3},
		{"a 502 page", 502, `<html>Bad Gateway</html>`, domain.CodeProviderError, true, 3},
		{"expired token", 401, whatsapptest.Error(190, "Error validating access token: Session has expired"), domain.CodeProviderError, true, 1},
		{"account locked", 400, whatsapptest.Error(131031, "Account has been locked"), domain.CodeProviderError, true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, nil)
			r.p.SetAnswer(func(whatsapptest.Request) (int, string, bool) { return c.status, c.body, true })
			res := r.c.Submit(context.Background(), text())
			e := res[0].Err
			if e == nil || e.Code != c.code || e.Temporary != c.temporary || res[0].Ref != "" {
				t.Fatalf("result %+v, error %+v; want %s temporary=%v", res[0], e, c.code, c.temporary)
			}
			if n := len(r.p.Requests()); n != c.attempts {
				t.Fatalf("%d attempts, want %d", n, c.attempts)
			}
			if strings.Contains(c.body, "message") && !strings.Contains(e.Message, "WhatsApp error") {
				t.Fatalf("message %q does not carry the platform's reason", e.Message)
			}
		})
	}
}

// A rate limit that passes: the message goes on the next attempt, after a
// wait that grows, and the retry is counted.
func TestRetryAfterRateLimit(t *testing.T) {
	r := newRig(t, nil)
	var n atomic.Int32
	r.p.SetAnswer(func(whatsapptest.Request) (int, string, bool) {
		if n.Add(1) <= 2 {
			return 400, whatsapptest.Error(130429, "Rate limit hit"), true
		}
		return 0, "", false
	})
	res := r.c.Submit(context.Background(), text())
	if res[0].Err != nil || res[0].Ref == "" {
		t.Fatalf("%+v %v", res[0], res[0].Err)
	}
	w := r.waits()
	// RetryMin 500ms, four times after a rate limit, doubled, jitter 0.5:
	// 2s·(0.5+0.25) and 4s·0.75.
	if len(w) != 2 || w[0] != 1500*time.Millisecond || w[1] != 3*time.Second {
		t.Fatalf("waits %v", w)
	}
	if h := r.c.Health(); h.Retries != 2 || h.Throttled != 2 || h.Sent != 1 || !h.Ready() {
		t.Fatalf("health %+v", h)
	}
}

// No retry is started that the dispatcher's deadline cannot see through.
func TestNoRetryPastTheDeadline(t *testing.T) {
	r := newRig(t, nil)
	r.p.SetAnswer(func(whatsapptest.Request) (int, string, bool) { return 503, `{}`, true })
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	res := r.c.Submit(ctx, text())
	if e := res[0].Err; e == nil || !e.Temporary {
		t.Fatalf("%+v", e)
	}
	if n := len(r.p.Requests()); n != 1 {
		t.Fatalf("%d attempts within a 1s deadline (request timeout 10s), want 1", n)
	}
}

// An expired token takes the provider down in its health until a request
// goes through again.
func TestExpiredTokenIsDownUntilFixed(t *testing.T) {
	r := newRig(t, nil)
	var broken atomic.Bool
	broken.Store(true)
	r.p.SetAnswer(func(whatsapptest.Request) (int, string, bool) {
		if broken.Load() {
			return 401, whatsapptest.Error(190, "Error validating access token: Session has expired"), true
		}
		return 0, "", false
	})
	r.c.Submit(context.Background(), text())
	h := r.c.Health()
	if h.Ready() || !strings.Contains(h.Down, "190") {
		t.Fatalf("health after 190: %+v", h)
	}
	broken.Store(false)
	if res := r.c.Submit(context.Background(), text()); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if h := r.c.Health(); !h.Ready() || h.LastError == "" {
		t.Fatalf("health after a good request: %+v", h)
	}
}

// A platform that does not answer costs one request timeout per attempt
// and ends as a temporary failure.
func TestRequestTimeout(t *testing.T) {
	r := newRig(t, func(c *Config) { c.RequestTimeout = 50 * time.Millisecond; c.MaxAttempts = 2 })
	r.p.SetAnswer(func(whatsapptest.Request) (int, string, bool) { return 0, "", true }) // hang
	res := r.c.Submit(context.Background(), text())
	if e := res[0].Err; e == nil || !e.Temporary || !strings.Contains(e.Message, "no answer within the request timeout") {
		t.Fatalf("%+v", e)
	}
	if n := len(r.p.Requests()); n != 2 {
		t.Fatalf("%d attempts, want 2", n)
	}
}

// The rate cap spaces requests evenly.
func TestRateCap(t *testing.T) {
	r := newRig(t, func(c *Config) { c.RatePerSecond = 10; c.Concurrency = 1 })
	msgs := append(append(text(), text()...), text()...)
	for _, res := range r.c.Submit(context.Background(), msgs) {
		if res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	// The clock stands still, so each request reserves the next slot.
	if w := r.waits(); len(w) != 2 || w[0] != 100*time.Millisecond || w[1] != 200*time.Millisecond {
		t.Fatalf("waits %v", w)
	}
}

// Nothing the adapter logs carries the token, the app secret or the
// verify token.
func TestSecretsNeverLogged(t *testing.T) {
	r := newRig(t, nil)
	r.p.SetAnswer(func(whatsapptest.Request) (int, string, bool) {
		return 401, whatsapptest.Error(190, "Error validating access token"), true
	})
	r.c.Submit(context.Background(), text())
	post(t, r, []byte(`{"object":"whatsapp_business_account","entry":[]}`), "sha256=00")
	get(t, r, "subscribe", "wrong", "1")
	r.sink.Fail(context.DeadlineExceeded)
	body := whatsapptest.Business{DisplayPhoneNumber: "15550783881"}.Message("16505551234", time.Now(), map[string]any{"type": "text", "text": map[string]any{"body": "hi"}})
	post(t, r, body, Sign(body, testAppSecret))
	logs := r.log.String()
	if !strings.Contains(logs, "190") || !strings.Contains(logs, "X-Hub-Signature-256") || !strings.Contains(logs, "not stored") {
		t.Fatalf("expected log lines missing:\n%s", logs)
	}
	for _, s := range []string{testToken, testAppSecret, testVerifyToken} {
		if strings.Contains(logs, s) {
			t.Fatalf("a secret was logged:\n%s", logs)
		}
	}
}
