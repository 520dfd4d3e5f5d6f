package whatsapp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/msgsvc/msgsvc/internal/backoff"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
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
	if err := provider.Usable(TypeName, cfg.Validate(), deps.Sink); err != nil {
		return nil, err
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
	return httpcall.Parallel(ctx, c.cfg.Concurrency, msgs, c.send)
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
// and rate limits while the retry policy and ctx allow, and decodes a 2xx
// answer into out.
func (c *Client) call(ctx context.Context, req request, out any) (f *failure) {
	// The backoff after a rate limit starts four times higher: the
	// platform's window is longer than a transient fault.
	loop := backoff.Loop{Policy: backoff.Policy{Min: c.cfg.RetryMin, Max: c.cfg.RetryMax, Attempts: c.cfg.MaxAttempts,
		Jitter: backoff.Equal, Rand: c.rand}, Sleep: c.sleep, Budget: c.cfg.RequestTimeout / 2}
	loop.Run(ctx, func(attempt int) backoff.Verdict {
		if attempt > 1 {
			c.counts.retries.Add(1)
		}
		if f = c.attempt(ctx, req, out); f == nil {
			c.up()
			return backoff.Verdict{}
		}
		c.noteFailure(f)
		v := backoff.Verdict{Again: f.kind == transient || f.kind == throttled}
		if f.kind == throttled {
			v.Scale = 4
		}
		return v
	})
	return f
}

func (c *Client) attempt(ctx context.Context, req request, out any) *failure {
	if err := c.rate.take(ctx); err != nil {
		return &failure{&provider.Error{Code: domain.CodeProviderError, Message: "not sent: " + err.Error(), Temporary: true}, transient}
	}
	c.counts.inFlight.Add(1)
	defer c.counts.inFlight.Add(-1)
	h := http.Header{"Authorization": {"Bearer " + c.cfg.Token}, "User-Agent": {c.cfg.UserAgent}, "Accept": {"application/json"}}
	if req.contentType != "" {
		h.Set("Content-Type", req.contentType)
	}
	ans, err := httpcall.Exchange(ctx, c.http, c.cfg.RequestTimeout, httpcall.Request{Method: req.method, URL: c.cfg.APIURL + req.path,
		Header: h, Body: req.body})
	if httpcall.IsBadRequest(err) {
		return &failure{&provider.Error{Code: domain.CodeProviderError, Message: err.Error()}, refused}
	}
	if err != nil {
		f := transportError(err)
		return &f
	}
	if ans.Status/100 != 2 {
		f := answerError(ans.Status, ans.Body)
		if f.kind == throttled {
			c.counts.throttled.Add(1)
		}
		return &f
	}
	if out != nil {
		if err := json.Unmarshal(ans.Body, out); err != nil {
			return &failure{&provider.Error{Code: domain.CodeProviderError, Message: "WhatsApp answered unreadable JSON: " + truncate(err.Error(), 200)}, refused}
		}
	}
	return nil
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
