package rbm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/msgsvc/msgsvc/internal/provider"
)

// Operations, as metrics label them.
const (
	opSend       = "send"
	opCapability = "capability"
	opRevoke     = "revoke"
	opUpload     = "upload"
)

// call is one request to the platform. body makes the request body anew
// for each try (nil: none); length is its size when known.
type call struct {
	op          string
	method, url string
	body        func() (io.Reader, error)
	length      int64
	contentType string
}

func bytesBody(b []byte) func() (io.Reader, error) {
	return func() (io.Reader, error) { return bytes.NewReader(b), nil }
}

// answer is the platform's HTTP answer to a call.
type answer struct {
	status int
	body   []byte
	header http.Header
}

// reason is Google's error status and message, e.g. "NOT_FOUND: Requested
// entity was not found.", or the start of an unexpected body.
func (a answer) reason() string { return googleReason(a.status, a.body) }

func googleReason(status int, body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && (e.Error.Status != "" || e.Error.Message != "") {
		return strings.TrimPrefix(e.Error.Status+": "+e.Error.Message, ": ")
	}
	if s := strings.TrimSpace(string(body)); s != "" {
		return truncate(s, 200)
	}
	return http.StatusText(status)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// authError is a refusal of our credentials: by the token endpoint, or a
// 401/403 of the API. It is not retried at once (a key does not fix
// itself), shows the provider down in health, and fails the hand-over as
// temporary, so that messages wait (or fail over) rather than fail.
type authError struct{ msg string }

func (e *authError) Error() string { return e.msg }

// exchange makes a call, trying again with backoff and jitter when the
// platform answers 429 or 5xx or cannot be reached, at most
// Config.Attempts times and within ctx. Any other answer is returned for
// the caller to read; what could not be had is a temporary error.
func (a *Adapter) exchange(ctx context.Context, c call) (answer, *provider.Error) {
	for attempt := 1; ; attempt++ {
		if a.limiter != nil {
			if err := a.limiter.Wait(ctx); err != nil {
				return answer{}, temporary("rate cap: no turn before the deadline: %v", err)
			}
		}
		ans, err := a.once(ctx, c)
		var ae *authError
		var pe *provider.Error
		switch {
		case errors.As(err, &ae):
			a.stats.request(c.op, outcomeAuth)
			a.noteAuth(ae.msg)
			return answer{}, temporary("credentials refused: %s", ae.msg)
		case err != nil:
			a.stats.request(c.op, outcomeTransient)
			pe = temporary("%s: %v", c.op, err)
		case retryable(ans.status):
			a.stats.request(c.op, outcomeTransient)
			if ans.status == http.StatusTooManyRequests {
				a.stats.throttled.Inc()
			}
			pe = temporary("the platform answered %d (%s)", ans.status, ans.reason())
		default:
			a.stats.request(c.op, outcomeOf(ans.status))
			return ans, nil
		}
		a.noteErr(pe.Message)
		if attempt >= a.cfg.Attempts || !sleep(ctx, a.backoff(attempt, ans)) {
			return answer{}, pe
		}
		a.stats.retries.Inc()
	}
}

// once makes one try: a token, then the request.
func (a *Adapter) once(ctx context.Context, c call) (answer, error) {
	tok, err := a.token()
	if err != nil {
		return answer{}, err
	}
	var body io.Reader
	if c.body != nil {
		if body, err = c.body(); err != nil {
			return answer{}, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, body)
	if err != nil {
		if rc, ok := body.(io.Closer); ok {
			rc.Close()
		}
		return answer{}, err
	}
	if c.length > 0 {
		req.ContentLength = c.length
	}
	tok.SetAuthHeader(req)
	req.Header.Set("User-Agent", "msgsvc-rbm/1")
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return answer{}, err
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		if resp.StatusCode == http.StatusUnauthorized {
			a.dropToken() // it may have been revoked: the next try gets a new one
		}
		return answer{}, &authError{fmt.Sprintf("the API answered %d (%s)", resp.StatusCode, googleReason(resp.StatusCode, raw))}
	}
	a.noteAuth("")
	return answer{status: resp.StatusCode, body: raw, header: resp.Header}, nil
}

// token returns a valid access token, from the cache or the token
// endpoint. A refusal by the endpoint (4xx) is an authError; the endpoint
// being down is a plain error, retried.
func (a *Adapter) token() (*oauth2.Token, error) {
	a.mu.Lock()
	ts := a.tokens
	a.mu.Unlock()
	tok, err := ts.Token()
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode/100 == 4 {
		reason := re.ErrorCode
		if reason == "" {
			reason = googleReason(re.Response.StatusCode, re.Body)
		}
		return nil, &authError{fmt.Sprintf("the token endpoint answered %d (%s)", re.Response.StatusCode, reason)}
	}
	if err != nil {
		return nil, fmt.Errorf("token endpoint: %w", err)
	}
	return tok, nil
}

func (a *Adapter) dropToken() {
	a.mu.Lock()
	a.tokens = tokenSource(a.sa, a.http)
	a.mu.Unlock()
}

func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusInternalServerError ||
		status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
}

// backoff is the wait before try n+1: RetryMin doubled each time up to
// RetryMax with equal jitter, or the platform's Retry-After when it asks
// for longer (still at most RetryMax).
func (a *Adapter) backoff(n int, ans answer) time.Duration {
	d := a.cfg.RetryMin
	for i := 1; i < n && d < a.cfg.RetryMax; i++ {
		d *= 2
	}
	d = min(d, a.cfg.RetryMax)
	d = d/2 + time.Duration(a.rand()*float64(d/2))
	if s, err := strconv.Atoi(ans.header.Get("Retry-After")); err == nil && s > 0 {
		d = max(d, min(time.Duration(s)*time.Second, a.cfg.RetryMax))
	}
	return d
}

// sleep waits d; false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
