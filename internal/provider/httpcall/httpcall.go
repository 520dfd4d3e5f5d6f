// Package httpcall is what the HTTP messaging adapters (Twilio, Telnyx,
// Vonage) share: one request to the provider with a per-request timeout,
// retried with backoff after transient errors, a rate limit (429 and its
// Retry-After) honoured for every later request too, and the counters that
// make an adapter's health line. Each adapter keeps its own payloads, its
// error codes and its callbacks.
package httpcall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgsvc/msgsvc/internal/channel/sms"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Settings tune a Client; zero values take the defaults noted.
type Settings struct {
	// Provider names the peer in error messages and logs ("Twilio").
	Provider string
	// Name is the adapter's name, for logs.
	Name string
	// Timeout bounds one request (default 10s).
	Timeout time.Duration
	// MaxAttempts is how often one request is tried within a hand-over
	// (default 3); what still fails is left to the dispatcher's retries.
	MaxAttempts int
	// RetryMin and RetryMax bound the backoff between attempts (defaults
	// 500ms and 8s).
	RetryMin, RetryMax time.Duration
	// MaxRetryAfter is the longest rate-limit pause waited within one
	// hand-over (default 10s): a longer one fails the hand-over for now,
	// and every request until it ends fails the same way without reaching
	// the provider.
	MaxRetryAfter time.Duration
	// Concurrency is the number of requests in flight at once (default 8).
	Concurrency int
}

func (s Settings) withDefaults() Settings {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&s.Timeout, 10*time.Second)
	def(&s.RetryMin, 500*time.Millisecond)
	def(&s.RetryMax, 8*time.Second)
	def(&s.MaxRetryAfter, 10*time.Second)
	s.RetryMax = max(s.RetryMax, s.RetryMin)
	if s.MaxAttempts <= 0 {
		s.MaxAttempts = 3
	}
	if s.Concurrency <= 0 {
		s.Concurrency = 8
	}
	return s
}

// Deps are the Client's clock, HTTP client and logger; nil takes the
// defaults (time.Now, a client that follows no redirect, slog.Default()).
type Deps struct {
	HTTP  *http.Client
	Now   func() time.Time
	Log   *slog.Logger
	Sleep func(ctx context.Context, d time.Duration) error
	Rand  func() float64
}

// Request is one call to the provider.
type Request struct {
	Method string // default POST
	URL    string
	Header http.Header
	Body   []byte
}

// Answer is the provider's answer.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Check reads an answer the Client does not classify itself (a 2xx, or a
// 4xx other than 429 and 401): nil accepts it; a temporary error is tried
// again; a permanent one ends the message with its code.
type Check func(a Answer) *provider.Error

// Client calls one provider. It is safe for concurrent use.
type Client struct {
	s     Settings
	http  *http.Client
	now   func() time.Time
	log   *slog.Logger
	sleep func(ctx context.Context, d time.Duration) error
	rand  func() float64

	Counts Counts

	mu        sync.Mutex
	holdUntil time.Time // a rate limit's end: no request before it
	down      string    // why the provider refuses our credentials; "" when fine
	lastErr   string
}

// Counts are what the adapter did, for its health line.
type Counts struct {
	Sent, Refused, Failed, Retries, Throttled, Callbacks, BadSignatures atomic.Uint64
}

// New makes a Client.
func New(s Settings, d Deps) *Client {
	c := &Client{s: s.withDefaults(), http: d.HTTP, now: d.Now, log: d.Log, sleep: d.Sleep, rand: d.Rand}
	if c.http == nil {
		c.http = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 32,
			IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second, ForceAttemptHTTP2: true},
			// An API call is never redirected; following one would hand
			// our credentials to wherever it points.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	if c.rand == nil {
		c.rand = rand.Float64
	}
	return c
}

// Now is the Client's clock.
func (c *Client) Now() time.Time { return c.now() }

// Close lets idle connections go.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Each runs send for every message, Concurrency at a time, and returns
// the results in order, counting the outcomes.
func (c *Client) Each(ctx context.Context, msgs []provider.Outbound, send func(context.Context, provider.Outbound) provider.Result) []provider.Result {
	out := make([]provider.Result, len(msgs))
	sem := make(chan struct{}, c.s.Concurrency)
	var wg sync.WaitGroup
	for i := range msgs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := provider.Result{Err: oversizePart(msgs[i])}
			if r.Err == nil {
				r = send(ctx, msgs[i])
			}
			switch {
			case r.Err == nil:
				c.Counts.Sent.Add(1)
			case r.Err.Temporary:
				c.Counts.Failed.Add(1)
			default:
				c.Counts.Refused.Add(1)
			}
			out[i] = r
		}()
	}
	wg.Wait()
	return out
}

// oversizePart refuses an SMS part its sender cut (it has a user data
// header) whose text does not fit one segment. It was charged one; these
// APIs take no header, only a Body they would cut and bill as several.
func oversizePart(m provider.Outbound) *provider.Error {
	if m.Channel != domain.SMS || m.Content.UDH == "" {
		return nil
	}
	if n := sms.PartOctets(m.Body, len(m.Content.UDH)/2); n > sms.MaxUserData {
		return &provider.Error{Code: domain.CodeRejected, Message: fmt.Sprintf(
			"a part with a user data header is %d octets on the air, more than the %d of the one segment it was charged", n, sms.MaxUserData)}
	}
	return nil
}

// Do makes the request, trying again after transient errors and rate
// limits while attempts and ctx allow. A 2xx answer, and a 4xx other than
// 429 and 401, are read by check.
func (c *Client) Do(ctx context.Context, req Request, check Check) (Answer, *provider.Error) {
	for attempt := 1; ; attempt++ {
		a, err := c.attempt(ctx, req, check)
		if err == nil {
			c.up()
			return a, nil
		}
		c.note(err)
		if !err.Temporary || attempt >= c.s.MaxAttempts || ctx.Err() != nil {
			return a, err
		}
		wait := c.backoff(attempt)
		if hold := c.held(); hold > wait {
			wait = hold
		}
		if wait > c.s.MaxRetryAfter {
			return a, err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait+c.s.Timeout/2 {
			return a, err // no time left for a useful attempt: the dispatcher retries later
		}
		c.Counts.Retries.Add(1)
		if c.sleep(ctx, wait) != nil {
			return a, err
		}
	}
}

func (c *Client) attempt(ctx context.Context, req Request, check Check) (Answer, *provider.Error) {
	if err := ctx.Err(); err != nil {
		return Answer{}, c.temporary("not sent: " + err.Error())
	}
	if hold := c.held(); hold > 0 {
		return Answer{}, c.temporary(fmt.Sprintf("not sent: rate limited for another %v", hold.Round(time.Millisecond)))
	}
	rctx, cancel := context.WithTimeout(ctx, c.s.Timeout)
	defer cancel()
	method := req.Method
	if method == "" {
		method = http.MethodPost
	}
	hr, err := http.NewRequestWithContext(rctx, method, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return Answer{}, &provider.Error{Code: domain.CodeProviderError, Message: "bad request: " + err.Error()}
	}
	for k, v := range req.Header {
		hr.Header[k] = v
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		return Answer{}, c.transport(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Answer{}, c.transport(err)
	}
	a := Answer{Status: resp.StatusCode, Header: resp.Header, Body: body}
	switch {
	case a.Status == http.StatusTooManyRequests:
		c.Counts.Throttled.Add(1)
		wait := RetryAfter(a.Header.Get("Retry-After"), c.now())
		if wait <= 0 {
			wait = 4 * c.s.RetryMin
		}
		c.hold(wait)
		return a, c.temporary(fmt.Sprintf("%s rate limit (429): retry after %v", c.s.Provider, wait))
	case a.Status == http.StatusUnauthorized:
		return a, CredentialsRefused(c.s.Provider, "401: "+Snippet(a.Body))
	case a.Status >= 500:
		return a, c.temporary(fmt.Sprintf("%s answered %d: %s", c.s.Provider, a.Status, Snippet(a.Body)))
	case a.Status/100 == 2 || a.Status/100 == 4:
		return a, check(a)
	}
	return a, c.temporary(fmt.Sprintf("%s answered %d", c.s.Provider, a.Status))
}

func (c *Client) temporary(msg string) *provider.Error {
	return &provider.Error{Code: domain.CodeProviderError, Message: msg, Temporary: true}
}

func (c *Client) transport(err error) *provider.Error {
	msg := err.Error()
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		msg = fmt.Sprintf("no answer within %v", c.s.Timeout)
	}
	return c.temporary(c.s.Provider + " request failed: " + msg)
}

const refusesCredentials = " refuses the credentials or the account"

// CredentialsRefused is the error of an answer that refuses our
// credentials or account, not the message: temporary (messages wait, the
// route's breaker moves traffic to the secondary), and the provider shows
// as down in its health until a request is taken again.
func CredentialsRefused(providerName, detail string) *provider.Error {
	return &provider.Error{Code: domain.CodeProviderError, Temporary: true, Message: providerName + refusesCredentials + " (" + detail + ")"}
}

// hold keeps every request back for d, as a rate limit asks.
func (c *Client) hold(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if until := c.now().Add(d); until.After(c.holdUntil) {
		c.holdUntil = until
	}
}

// held is how long requests are still kept back.
func (c *Client) held() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.holdUntil.Sub(c.now())
}

// backoff is the wait before attempt+1: exponential from RetryMin up to
// RetryMax, jittered over its upper half so that parallel senders do not
// come back together.
func (c *Client) backoff(attempt int) time.Duration {
	d := min(float64(c.s.RetryMin)*math.Pow(2, float64(attempt-1)), float64(c.s.RetryMax))
	return time.Duration(d/2 + d/2*c.rand())
}

// note keeps the last error for health, and marks the provider down while
// it refuses our credentials (messages wait and retry; the route's
// breaker moves traffic to the secondary).
func (c *Client) note(err *provider.Error) {
	if !err.Temporary {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastErr = err.Message
	if strings.Contains(err.Message, refusesCredentials) && c.down == "" {
		c.down = err.Message
		c.log.Error(c.s.Provider+" refuses this provider's credentials; messages wait and retry until it is fixed",
			"provider", c.s.Name, "err", err.Message)
	}
}

func (c *Client) up() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down != "" {
		c.log.Info(c.s.Provider+" accepts this provider's credentials again", "provider", c.s.Name)
		c.down = ""
	}
}

// Health is the adapter's line for /readyz.
func (c *Client) Health() provider.Health {
	k := &c.Counts
	detail := fmt.Sprintf("sent %d, refused %d, failed for now %d, retries %d, throttled %d, callbacks %d, bad signatures %d",
		k.Sent.Load(), k.Refused.Load(), k.Failed.Load(), k.Retries.Load(), k.Throttled.Load(), k.Callbacks.Load(), k.BadSignatures.Load())
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down != "" {
		return provider.Health{Detail: c.down + ": fix them; messages wait and retry; " + detail}
	}
	if c.lastErr != "" {
		detail += ", last error: " + c.lastErr
	}
	return provider.Health{Ready: true, Detail: detail}
}

// RetryAfter reads a Retry-After header: delay seconds or an HTTP date;
// 0 when absent or unreadable.
func RetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(n, 0)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// Snippet is a short, printable piece of an answer's body for messages.
func Snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
