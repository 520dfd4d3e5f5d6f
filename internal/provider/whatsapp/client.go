package whatsapp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Deps are what a Client works with besides the platform.
type Deps struct {
	// Sink takes statuses and replies from the webhook.
	Sink provider.Sink
	// Files reads uploaded media (mediaId) to send onwards; without it a
	// message with a mediaId fails with MEDIA_ERROR.
	Files Files
	// Cache remembers the platform's ids of uploaded files; without it
	// every send of a file uploads it again.
	Cache MediaCache
}

// Client is a WhatsApp Business Cloud API provider. It is safe for
// concurrent use.
type Client struct {
	cfg   Config
	deps  Deps
	http  *http.Client
	log   *slog.Logger
	now   func() time.Time
	rand  func() float64
	sleep func(ctx context.Context, d time.Duration) error
	rate  *bucket

	uploads singleflight.Group
	counts  counters

	mu        sync.Mutex
	downFor   string // why the platform refuses us all (token, account); "" when fine
	lastErr   string
	lastErrAt time.Time
}

type counters struct {
	sent, refused, failed, retries, throttled, uploads, reused, notifications, badSignatures atomic.Uint64
	inFlight                                                                                 atomic.Int64
}

// New checks cfg and makes a Client.
func New(cfg Config, deps Deps, opts ...Option) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if deps.Sink == nil {
		return nil, fmt.Errorf("whatsapp: no sink for statuses and replies")
	}
	o := buildOptions(opts)
	cfg = cfg.withDefaults()
	return &Client{cfg: cfg, deps: deps, http: o.http, log: o.log.With("provider", cfg.Name), now: o.now, rand: o.rand, sleep: o.sleep,
		rate: newBucket(cfg.RatePerSecond, o.now, o.sleep)}, nil
}

// Name is the provider's name in webhooks and metrics.
func (c *Client) Name() string { return c.cfg.Name }

// Start does nothing: the platform is reached per request.
func (c *Client) Start(context.Context) error { return nil }

// Close lets idle connections go.
func (c *Client) Close(context.Context) error {
	c.http.CloseIdleConnections()
	return nil
}

// Submit sends each message (Concurrency at a time, spaced by the rate
// cap) and returns one result per message, in order: the platform's
// message id (wamid) as Ref, or the error.
func (c *Client) Submit(ctx context.Context, msgs []provider.Outbound) []provider.Result {
	out := make([]provider.Result, len(msgs))
	sem := make(chan struct{}, c.cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range msgs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = c.send(ctx, msgs[i])
		}()
	}
	wg.Wait()
	return out
}

func (c *Client) send(ctx context.Context, m provider.Outbound) provider.Result {
	body, f := c.payload(ctx, m)
	if f == nil {
		var resp struct {
			Messages []struct {
				ID string `json:"id"`
			} `json:"messages"`
		}
		f = c.call(ctx, request{path: "/" + c.cfg.PhoneNumberID + "/messages", contentType: "application/json", body: body}, &resp)
		if f == nil {
			if len(resp.Messages) > 0 && resp.Messages[0].ID != "" {
				c.counts.sent.Add(1)
				return provider.Result{Ref: resp.Messages[0].ID}
			}
			// Taken but unnamed: sending again could deliver it twice.
			f = &failure{&provider.Error{Code: domain.CodeProviderError, Message: "WhatsApp accepted the message without a message id"}, refused}
		}
	}
	if f.err.Temporary {
		c.counts.failed.Add(1)
	} else {
		c.counts.refused.Add(1)
	}
	c.log.Debug("whatsapp send failed", "message", m.ID, "code", f.err.Code, "temporary", f.err.Temporary, "err", f.err.Message)
	return provider.Result{Err: f.err}
}

// request is one call to the Graph API; path is below APIURL.
type request struct {
	method      string // default POST
	path        string
	contentType string
	body        []byte
}

// call makes a request, trying again with backoff after transient errors
// and rate limits while attempts and ctx allow, and decodes a 2xx answer
// into out.
func (c *Client) call(ctx context.Context, req request, out any) *failure {
	for attempt := 1; ; attempt++ {
		f := c.attempt(ctx, req, out)
		if f == nil {
			c.up()
			return nil
		}
		c.noteFailure(f)
		if f.kind == refused || f.kind == down || attempt >= c.cfg.MaxAttempts {
			return f
		}
		wait := c.backoff(attempt, f.kind == throttled)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait+c.cfg.RequestTimeout/2 {
			return f // no time left for a useful attempt: the dispatcher retries later
		}
		c.counts.retries.Add(1)
		if c.sleep(ctx, wait) != nil {
			return f
		}
	}
}

func (c *Client) attempt(ctx context.Context, req request, out any) *failure {
	if err := c.rate.take(ctx); err != nil {
		return &failure{&provider.Error{Code: domain.CodeProviderError, Message: "not sent: " + err.Error(), Temporary: true}, transient}
	}
	c.counts.inFlight.Add(1)
	defer c.counts.inFlight.Add(-1)
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	method := req.method
	if method == "" {
		method = http.MethodPost
	}
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	hr, err := http.NewRequestWithContext(rctx, method, c.cfg.APIURL+req.path, body)
	if err != nil {
		return &failure{&provider.Error{Code: domain.CodeProviderError, Message: "bad request: " + err.Error()}, refused}
	}
	hr.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	hr.Header.Set("User-Agent", c.cfg.UserAgent)
	hr.Header.Set("Accept", "application/json")
	if req.contentType != "" {
		hr.Header.Set("Content-Type", req.contentType)
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		f := transportError(err)
		return &f
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		f := transportError(err)
		return &f
	}
	if resp.StatusCode/100 != 2 {
		f := answerError(resp.StatusCode, raw)
		if f.kind == throttled {
			c.counts.throttled.Add(1)
		}
		return &f
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return &failure{&provider.Error{Code: domain.CodeProviderError, Message: "WhatsApp answered unreadable JSON: " + truncate(err.Error(), 200)}, refused}
		}
	}
	return nil
}

// backoff is the wait before attempt+1: exponential from RetryMin (four
// times that after a rate limit) up to RetryMax, with full jitter over its
// upper half so that parallel senders do not come back together.
func (c *Client) backoff(attempt int, rateLimited bool) time.Duration {
	base := float64(c.cfg.RetryMin)
	if rateLimited {
		base *= 4
	}
	d := min(base*math.Pow(2, float64(attempt-1)), float64(c.cfg.RetryMax))
	return time.Duration(d/2 + d/2*c.rand())
}

// noteFailure keeps the last error for health and marks the provider down
// when the platform refuses our token or account.
func (c *Client) noteFailure(f *failure) {
	if f.kind == refused {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastErr, c.lastErrAt = f.err.Message, c.now()
	if f.kind == down && c.downFor == "" {
		c.downFor = f.err.Message
		c.log.Error("WhatsApp refuses this provider's credentials or account; messages wait and retry until it is fixed",
			"err", f.err.Message)
	}
}

// up clears the down state after any request the platform took.
func (c *Client) up() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.downFor != "" {
		c.log.Info("WhatsApp accepts this provider again")
		c.downFor = ""
	}
}
