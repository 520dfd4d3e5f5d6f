// Package httpcall is the one call layer of the adapters over HTTP:
// Exchange makes one request (its timeout, headers, a body read up to
// MaxAnswer) for all five (Twilio, Telnyx, Vonage, WhatsApp, RBM). The
// Client adds what the SMS APIs share: a status-code table of verdicts,
// retries with the one backoff policy, a rate limit (429 and its
// Retry-After) honoured for every later request too, refused credentials
// shown in health, and the counters of an adapter's health line. Base is
// an adapter's common part; each adapter keeps its payloads, its error
// codes and its callbacks.
package httpcall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgsvc/msgsvc/internal/backoff"
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
	// Statuses is the adapter's table of statuses (default
	// DefaultStatuses).
	Statuses Statuses
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
	if s.Statuses == nil {
		s.Statuses = DefaultStatuses()
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
	// Open, when set instead of Body, makes the body anew for each try
	// (a file streamed to the platform); Length is its size when known.
	Open   func() (io.Reader, error)
	Length int64
}

// MaxAnswer bounds what is read of an answer's body; the providers'
// answers are far smaller.
const MaxAnswer = 1 << 20

// Exchange makes one request, bounded by timeout when above zero, and
// reads at most MaxAnswer of the answer. The error is the transport's (or
// the request's, when it cannot be made): no answer was had.
func Exchange(ctx context.Context, hc *http.Client, timeout time.Duration, req Request) (Answer, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	method := req.Method
	if method == "" {
		method = http.MethodPost
	}
	var body io.Reader
	switch {
	case req.Open != nil:
		b, err := req.Open()
		if err != nil {
			return Answer{}, fmt.Errorf("request body: %w", err)
		}
		body = b
	case req.Body != nil:
		body = bytes.NewReader(req.Body)
	}
	hr, err := http.NewRequestWithContext(ctx, method, req.URL, body)
	if err != nil {
		if rc, ok := body.(io.Closer); ok {
			rc.Close()
		}
		return Answer{}, &badRequest{err}
	}
	if req.Length > 0 {
		hr.ContentLength = req.Length
	}
	for k, v := range req.Header {
		hr.Header[k] = v
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer))
	if err != nil {
		return Answer{}, err
	}
	return Answer{Status: resp.StatusCode, Header: resp.Header, Body: raw}, nil
}

// badRequest is a request that could not be made: no try mends it.
type badRequest struct{ err error }

func (e *badRequest) Error() string { return "bad request: " + e.err.Error() }
func (e *badRequest) Unwrap() error { return e.err }

// IsBadRequest reports whether err is a request Exchange could not make.
func IsBadRequest(err error) bool {
	var br *badRequest
	return errors.As(err, &br)
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
		c.http = NewHTTPClient()
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.sleep == nil {
		c.sleep = backoff.Sleep
	}
	if c.rand == nil {
		c.rand = rand.Float64
	}
	return c
}

// NewHTTPClient is the HTTP client of an adapter: pooled connections, and
// no redirect followed, since an API call is never redirected and
// following one would hand our credentials to wherever it points.
func NewHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 32,
		IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second, ForceAttemptHTTP2: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Now is the Client's clock.
func (c *Client) Now() time.Time { return c.now() }

// Close lets idle connections go.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Each runs send for every message, Concurrency at a time, and returns
// the results in order, counting the outcomes.
func (c *Client) Each(ctx context.Context, msgs []provider.Outbound, send func(context.Context, provider.Outbound) provider.Result) []provider.Result {
	return Parallel(ctx, c.s.Concurrency, msgs, func(ctx context.Context, m provider.Outbound) provider.Result {
		r := provider.Result{Err: oversizePart(m)}
		if r.Err == nil {
			r = send(ctx, m)
		}
		switch {
		case r.Err == nil:
			c.Counts.Sent.Add(1)
		case r.Err.Temporary:
			c.Counts.Failed.Add(1)
		default:
			c.Counts.Refused.Add(1)
		}
		return r
	})
}

// Parallel runs send for every message, n at a time, and returns the
// results in order.
func Parallel(ctx context.Context, n int, msgs []provider.Outbound, send func(context.Context, provider.Outbound) provider.Result) []provider.Result {
	out := make([]provider.Result, len(msgs))
	Each(len(msgs), n, func(i int) { out[i] = send(ctx, msgs[i]) })
	return out
}

// Each runs f(0) … f(n-1), at most limit at once (at least one), and
// returns when all have.
func Each(n, limit int, f func(i int)) {
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
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
// limits while the retry policy and ctx allow. A 2xx answer, and a 4xx
// other than 429 and 401, are read by check.
func (c *Client) Do(ctx context.Context, req Request, check Check) (a Answer, err *provider.Error) {
	c.loop().Run(ctx, func(attempt int) backoff.Verdict {
		if attempt > 1 {
			c.Counts.Retries.Add(1)
		}
		a, err = c.attempt(ctx, req, check)
		if err == nil {
			c.up()
			return backoff.Verdict{}
		}
		c.note(err)
		return backoff.Verdict{Again: err.Temporary, AtLeast: c.held()}
	})
	return a, err
}

// loop is the Client's retry policy: exponential from RetryMin up to
// RetryMax, jittered over its upper half so that parallel senders do not
// come back together; a rate limit's pause longer than MaxRetryAfter is
// not waited out within a hand-over.
func (c *Client) loop() backoff.Loop {
	return backoff.Loop{Policy: backoff.Policy{Min: c.s.RetryMin, Max: c.s.RetryMax, Attempts: c.s.MaxAttempts,
		MaxWait: c.s.MaxRetryAfter, Jitter: backoff.Equal, Rand: c.rand}, Sleep: c.sleep, Budget: c.s.Timeout / 2}
}

func (c *Client) attempt(ctx context.Context, req Request, check Check) (Answer, *provider.Error) {
	if err := ctx.Err(); err != nil {
		return Answer{}, c.temporary("not sent: " + err.Error())
	}
	if hold := c.held(); hold > 0 {
		return Answer{}, c.temporary(fmt.Sprintf("not sent: rate limited for another %v", hold.Round(time.Millisecond)))
	}
	if req.Body == nil && req.Open == nil {
		req.Body = []byte{}
	}
	a, err := Exchange(ctx, c.http, c.s.Timeout, req)
	if IsBadRequest(err) {
		return Answer{}, &provider.Error{Code: domain.CodeProviderError, Message: err.Error()}
	}
	if err != nil {
		return Answer{}, c.transport(err)
	}
	switch c.s.Statuses.Of(a.Status) {
	case RateLimited:
		c.Counts.Throttled.Add(1)
		wait := RetryAfter(a.Header.Get("Retry-After"), c.now())
		if wait <= 0 {
			wait = 4 * c.s.RetryMin
		}
		c.hold(wait)
		return a, c.temporary(fmt.Sprintf("%s rate limit (%d): retry after %v", c.s.Provider, a.Status, wait))
	case Unauthorized:
		return a, CredentialsRefused(c.s.Provider, strconv.Itoa(a.Status)+": "+Snippet(a.Body))
	case Read:
		return a, check(a)
	}
	if a.Status >= 500 {
		return a, c.temporary(fmt.Sprintf("%s answered %d: %s", c.s.Provider, a.Status, Snippet(a.Body)))
	}
	return a, c.temporary(fmt.Sprintf("%s answered %d", c.s.Provider, a.Status))
}

// Verdict is what an answer's HTTP status says before its body is read.
type Verdict int

// The verdicts.
const (
	// Read leaves the answer to the adapter's Check: taken, or refused
	// by the adapter's own error codes.
	Read Verdict = iota
	// Transient is tried again with backoff.
	Transient
	// RateLimited is tried again after the answer's Retry-After, which
	// holds back every request of the adapter until it ends.
	RateLimited
	// Unauthorized refuses our credentials: temporary for the message,
	// and the provider shows down until a request is taken again.
	Unauthorized
)

// Statuses is an adapter's table of HTTP statuses that do not leave the
// answer to its Check. A status not listed is Read when 2xx or 4xx, and
// Transient otherwise.
type Statuses map[int]Verdict

// DefaultStatuses is the table of the Twilio, Telnyx and Vonage APIs.
func DefaultStatuses() Statuses {
	return Statuses{http.StatusTooManyRequests: RateLimited, http.StatusUnauthorized: Unauthorized}
}

// Of is the verdict on status.
func (t Statuses) Of(status int) Verdict {
	if v, ok := t[status]; ok {
		return v
	}
	if status/100 == 2 || status/100 == 4 {
		return Read
	}
	return Transient
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
