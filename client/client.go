// Package client is the Go client of the msgsvc integration API: typed
// requests and answers for every operation, errors that carry the API's
// problem code, an automatic Idempotency-Key on every POST with retries of
// transient failures under the same key, iterators over message lists and
// the events feed, and verification of the webhooks msgsvc signs.
//
// It uses the standard library only, so importing it adds nothing else to
// a program.
package client

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls one msgsvc node with one API key. It is safe for
// concurrent use.
type Client struct {
	base      string
	key       string
	http      *http.Client
	retries   int
	backoff   time.Duration
	userAgent string
}

// Option changes how a Client works.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (timeouts, proxies, transport).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithRetries sets how many times a request that failed transiently (a
// network error, 429 RATE_LIMITED, 500, 502, 503, 504) is tried again;
// 0 turns retries off. The default is 3.
func WithRetries(n int) Option { return func(c *Client) { c.retries = max(0, n) } }

// WithBackoff sets the first pause between tries (default 250 ms); each
// following pause doubles, with jitter. A Retry-After from the server
// takes precedence.
func WithBackoff(d time.Duration) Option { return func(c *Client) { c.backoff = d } }

// WithUserAgent names the program in the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// New returns a client of the node at baseURL (e.g. "http://127.0.0.1:8080")
// using apiKey (svc_test_… or svc_live_…).
func New(baseURL, apiKey string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), key: apiKey, http: &http.Client{Timeout: 30 * time.Second},
		retries: 3, backoff: 250 * time.Millisecond, userAgent: "msgsvc-client-go"}
	for _, o := range opts {
		o(c)
	}
	return c
}

// request is one API call.
type request struct {
	method, path string
	query        url.Values
	body         []byte
	contentType  string
	// idempotencyKey makes a POST safe to try again.
	idempotencyKey string
	// header, when set, receives the headers of the answer.
	header *http.Header
}

// NewIdempotencyKey returns a random key for a POST. The client adds one
// to every POST that has none, and sends the same key on each retry.
func NewIdempotencyKey() string {
	b := make([]byte, 16)
	_, _ = crand.Read(b) // crypto/rand never fails on supported platforms
	return hex.EncodeToString(b)
}

// do sends req, retrying transient failures, and decodes a 2xx answer
// into out (when not nil). Any other answer is an *Error.
func (c *Client) do(ctx context.Context, req request, out any) error {
	if req.method == http.MethodPost && req.idempotencyKey == "" {
		req.idempotencyKey = NewIdempotencyKey()
	}
	pause := c.backoff
	for attempt := 0; ; attempt++ {
		resp, err := c.once(ctx, req)
		wait, retry := c.shouldRetry(resp, err, attempt)
		if retry && wait <= 0 {
			wait = pause + rand.N(pause/2+1) // jitter spreads clients that failed together
			pause *= 2
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			retry = false // the caller would rather have this answer than a timeout
		}
		if !retry {
			if err == nil && req.header != nil {
				*req.header = resp.Header
			}
			return finish(resp, err, out)
		}
		if resp != nil {
			drain(resp)
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// once makes one HTTP exchange.
func (c *Client) once(ctx context.Context, req request) (*http.Response, error) {
	u := c.base + req.path
	if len(req.query) > 0 {
		u += "?" + req.query.Encode()
	}
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, u, body)
	if err != nil {
		return nil, fmt.Errorf("msgsvc: build request: %w", err)
	}
	hr.Header.Set("X-API-KEY", c.key)
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set("User-Agent", c.userAgent)
	if req.body != nil {
		ct := req.contentType
		if ct == "" {
			ct = "application/json"
		}
		hr.Header.Set("Content-Type", ct)
	}
	if req.idempotencyKey != "" {
		hr.Header.Set("Idempotency-Key", req.idempotencyKey)
	}
	return c.http.Do(hr)
}

// shouldRetry says whether an exchange failed transiently and, when the
// server said so, how long to wait.
func (c *Client) shouldRetry(resp *http.Response, err error, attempt int) (time.Duration, bool) {
	if attempt >= c.retries {
		return 0, false
	}
	if err != nil {
		// The context's own end is final; a network failure is not.
		var ne net.Error
		return 0, !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) &&
			(errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF))
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		// DAILY_LIMIT_REACHED is also 429, but waiting a minute does not
		// end a day: only RATE_LIMITED is worth another try.
		if resp.Header.Get("Retry-After") == "" {
			return 0, false
		}
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return time.Duration(max(secs, 1)) * time.Second, true
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return 0, true
	}
	return 0, false
}

// finish turns the last exchange into the caller's result.
func finish(resp *http.Response, err error, out any) error {
	if err != nil {
		return fmt.Errorf("msgsvc: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("msgsvc: read answer: %w", err)
	}
	if resp.StatusCode >= 300 {
		return newError(resp, raw)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("msgsvc: decode answer (%d): %w", resp.StatusCode, err)
	}
	return nil
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// jsonBody encodes a request body.
func jsonBody(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("msgsvc: encode request: %w", err)
	}
	return b, nil
}
