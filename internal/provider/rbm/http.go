package rbm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"golang.org/x/oauth2"

	"github.com/msgsvc/msgsvc/internal/backoff"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
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
func (a *Adapter) exchange(ctx context.Context, c call) (ans answer, pe *provider.Error) {
	// The platform's Retry-After is honoured up to RetryMax: a longer
	// pause is the dispatcher's to wait, not this hand-over's.
	loop := backoff.Loop{Policy: backoff.Policy{Min: a.cfg.RetryMin, Max: a.cfg.RetryMax, Attempts: a.cfg.Attempts,
		Jitter: backoff.Equal, Rand: a.rand}}
	loop.Run(ctx, func(attempt int) backoff.Verdict {
		if attempt > 1 {
			a.stats.retries.Inc()
		}
		ans, pe = answer{}, nil
		if a.limiter != nil {
			if err := a.limiter.Wait(ctx); err != nil {
				pe = temporary("rate cap: no turn before the deadline: %v", err)
				return backoff.Verdict{}
			}
		}
		got, err := a.once(ctx, c)
		var ae *authError
		switch {
		case errors.As(err, &ae):
			a.stats.request(c.op, outcomeAuth)
			a.noteAuth(ae.msg)
			pe = temporary("credentials refused: %s", ae.msg)
			return backoff.Verdict{}
		case err != nil:
			a.stats.request(c.op, outcomeTransient)
			pe = temporary("%s: %v", c.op, err)
		case statuses[got.status] == httpcall.RateLimited || statuses[got.status] == httpcall.Transient:
			a.stats.request(c.op, outcomeTransient)
			if statuses[got.status] == httpcall.RateLimited {
				a.stats.throttled.Inc()
			}
			pe = temporary("the platform answered %d (%s)", got.status, got.reason())
		default:
			a.stats.request(c.op, outcomeOf(got.status))
			ans = got
			return backoff.Verdict{}
		}
		a.noteErr(pe.Message)
		return backoff.Verdict{Again: true, AtLeast: min(httpcall.RetryAfter(got.header.Get("Retry-After"), a.now()), a.cfg.RetryMax)}
	})
	return ans, pe
}

// statuses are the platform's answers that are not the caller's to read:
// a refusal of our credentials, and those tried again. Any other is Read.
var statuses = httpcall.Statuses{
	http.StatusUnauthorized: httpcall.Unauthorized, http.StatusForbidden: httpcall.Unauthorized,
	http.StatusTooManyRequests: httpcall.RateLimited, http.StatusInternalServerError: httpcall.Transient,
	http.StatusBadGateway: httpcall.Transient, http.StatusServiceUnavailable: httpcall.Transient,
	http.StatusGatewayTimeout: httpcall.Transient,
}

// once makes one try: a token, then the request.
func (a *Adapter) once(ctx context.Context, c call) (answer, error) {
	tok, err := a.token()
	if err != nil {
		return answer{}, err
	}
	h := http.Header{"Authorization": {tok.Type() + " " + tok.AccessToken}, "User-Agent": {"msgsvc-rbm/1"}}
	if c.contentType != "" {
		h.Set("Content-Type", c.contentType)
	}
	got, err := httpcall.Exchange(ctx, a.http, 0, httpcall.Request{Method: c.method, URL: c.url, Header: h, Open: c.body, Length: c.length})
	if err != nil {
		return answer{}, err
	}
	if statuses[got.Status] == httpcall.Unauthorized {
		if got.Status == http.StatusUnauthorized {
			a.dropToken() // it may have been revoked: the next try gets a new one
		}
		return answer{}, &authError{fmt.Sprintf("the API answered %d (%s)", got.Status, googleReason(got.Status, got.Body))}
	}
	a.noteAuth("")
	return answer{status: got.Status, body: got.Body, header: got.Header}, nil
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
