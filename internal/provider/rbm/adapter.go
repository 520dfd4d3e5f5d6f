package rbm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/oauth2"
	"golang.org/x/time/rate"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
)

// Adapter is an RBM agent as a provider: it sends messages, answers
// capability questions, takes undelivered messages back, and turns the
// platform's webhook calls into reports for its Sink.
type Adapter struct {
	cfg     Config
	sink    provider.Sink
	files   Files
	log     *slog.Logger
	now     func() time.Time
	rand    func() float64
	http    *http.Client
	sa      serviceAccount
	limiter *rate.Limiter // nil: no cap
	uploads *fileCache
	cache   MediaCache // nil: uploads are remembered by this process only
	stats   *stats

	mu     sync.Mutex
	tokens oauth2.TokenSource
}

var _ provider.Provider = (*Adapter)(nil)

// New checks cfg and builds an adapter; it makes no request yet.
func New(cfg Config, sink provider.Sink, opts ...Option) (*Adapter, error) {
	if err := provider.Usable(TypeName, cfg.Validate(), sink); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	sa, _ := parseCredentials(cfg.Credentials) // Validate read it
	o := buildOptions(cfg, opts)
	a := &Adapter{cfg: cfg, sink: sink, files: o.files, log: o.log.With("provider", cfg.Name), now: o.now, rand: o.rand,
		http: o.http, sa: sa, uploads: newFileCache(), cache: o.cache, stats: newStats(cfg.Name)}
	if cfg.RatePerSecond > 0 {
		a.limiter = rate.NewLimiter(rate.Limit(cfg.RatePerSecond), 1)
	}
	a.tokens = tokenSource(sa, a.http)
	return a, nil
}

// Name is the provider's name (Config.Name).
func (a *Adapter) Name() string { return a.cfg.Name }

// Start checks the credentials in the background (a token is fetched), so
// that /readyz shows a refused key before the first message needs it.
func (a *Adapter) Start(ctx context.Context) error {
	go func() {
		_, err := a.token()
		var ae *authError
		switch {
		case errors.As(err, &ae):
			a.noteAuth(ae.msg)
			a.log.Warn("rbm: no access token yet", "err", err)
		case err != nil:
			a.noteErr(err.Error())
			a.log.Warn("rbm: no access token yet", "err", err)
		default:
			a.noteAuth("")
		}
	}()
	return nil
}

// Close has nothing to release: requests in flight end with their context.
func (a *Adapter) Close(context.Context) error { return nil }

// Submit sends messages, several at once (Config.Concurrency). Each gets
// the agent message id messageID(our id): the platform ignores an id it
// has seen, so a message handed over twice (a crash between the
// platform's answer and ours) reaches the phone once.
func (a *Adapter) Submit(ctx context.Context, msgs []provider.Outbound) []provider.Result {
	out := make([]provider.Result, len(msgs))
	a.each(len(msgs), func(i int) { out[i] = a.send(ctx, msgs[i]) })
	return out
}

func (a *Adapter) send(ctx context.Context, o provider.Outbound) provider.Result {
	if o.Channel != domain.RCS {
		return provider.Result{Err: permanent(domain.CodeRejected, "the rbm provider carries RCS messages only, not %s", o.Channel)}
	}
	body, perr := a.agentMessage(ctx, o)
	if perr != nil {
		return provider.Result{Err: perr}
	}
	id := messageID(o.ID)
	q := url.Values{"messageId": {id}, "agentId": {a.agent(o)}}
	ans, perr := a.exchange(ctx, call{op: opSend, method: http.MethodPost, url: a.phoneURL(o.To, "agentMessages") + "?" + q.Encode(),
		body: bytesBody(body), contentType: "application/json"})
	switch {
	case perr != nil:
		return provider.Result{Err: perr}
	case ans.status/100 == 2, ans.status == http.StatusConflict:
		// 409 ALREADY_EXISTS: the platform has this id from an earlier
		// hand-over of the same message.
		return provider.Result{Ref: id, FallbackAt: a.fallbackAt(o)}
	case ans.status == http.StatusNotFound:
		return provider.Result{Err: permanent(domain.CodeRCSNotSupported, "the platform cannot reach this phone over RCS (%s)", ans.reason())}
	case ans.status == http.StatusBadRequest:
		return provider.Result{Err: permanent(domain.CodeRejected, "the platform refused the message (%s)", ans.reason())}
	}
	return provider.Result{Err: permanent(domain.CodeProviderError, "the platform answered %d (%s)", ans.status, ans.reason())}
}

// fallbackAt is when a message with an SMS fallback is taken back if it
// is still undelivered: Config.FallbackAfter from now, but no later than
// halfway through what is left of its validity.
func (a *Adapter) fallbackAt(o provider.Outbound) time.Time {
	if _, ok := o.Content.SMSFallback(); !ok || o.ExpiresAt.IsZero() {
		return time.Time{}
	}
	now := a.now()
	wait := min(a.cfg.FallbackAfter, o.ExpiresAt.Sub(now)/2)
	if wait <= 0 {
		return time.Time{}
	}
	return now.Add(wait)
}

// Revoke takes messages back (DELETE agentMessages/{id}): 200 means the
// platform will not deliver it; 404 that it was delivered already.
func (a *Adapter) Revoke(ctx context.Context, msgs []provider.Outbound) []provider.Revocation {
	out := make([]provider.Revocation, len(msgs))
	a.each(len(msgs), func(i int) {
		o := msgs[i]
		q := url.Values{"agentId": {a.agent(o)}}
		ans, perr := a.exchange(ctx, call{op: opRevoke, method: http.MethodDelete,
			url: a.phoneURL(o.To, "agentMessages/"+messageID(o.ID)) + "?" + q.Encode()})
		switch {
		case perr != nil:
			out[i].Err = perr
		case ans.status/100 == 2:
			out[i].Revoked = true
		case ans.status == http.StatusNotFound:
		default:
			out[i].Err = permanent(domain.CodeProviderError, "the platform answered %d to a revocation (%s)", ans.status, ans.reason())
		}
	})
	return out
}

// Capabilities asks the platform, number by number, whether each phone
// can be reached over RCS: 200 yes, 404 no. A number the platform could
// not answer for is left out (unknown): it is sent as RCS, and a 404 then
// decides.
func (a *Adapter) Capabilities(ctx context.Context, numbers []string) map[string]bool {
	var mu sync.Mutex
	out := make(map[string]bool, len(numbers))
	a.each(len(numbers), func(i int) {
		q := url.Values{"requestId": {uuid.NewString()}, "agentId": {a.cfg.AgentID}}
		ans, perr := a.exchange(ctx, call{op: opCapability, method: http.MethodGet, url: a.phoneURL(numbers[i], "capabilities") + "?" + q.Encode()})
		if perr != nil || (ans.status/100 != 2 && ans.status != http.StatusNotFound) {
			return
		}
		mu.Lock()
		out[numbers[i]] = ans.status/100 == 2
		mu.Unlock()
	})
	return out
}

// agent is the agent a message goes out from: its sender (an approved
// RCS sender of the account is an agent id; one service account may act
// for several agents of its partner), else the configured agent.
func (a *Adapter) agent(o provider.Outbound) string { return cmp.Or(o.From, a.cfg.AgentID) }

// phoneURL is the API's resource of a phone: phones/+E164/<rest>.
func (a *Adapter) phoneURL(digits, rest string) string {
	return a.cfg.APIURL + "/phones/" + url.PathEscape("+"+digits) + "/" + rest
}

// each runs f(0) … f(n-1), at most Config.Concurrency at once.
func (a *Adapter) each(n int, f func(i int)) { httpcall.Each(n, a.cfg.Concurrency, f) }

// messageNamespace names our message ids in the UUIDs the platform wants.
var messageNamespace = uuid.MustParse("5d0d6f2e-9a57-4c1e-8f0b-3f2f6c8a4b71")

// messageID is the platform's id of one of our messages: RBM wants a UUID,
// and a name-based one (version 5) is the same for every hand-over of a
// message, so the platform recognises a resubmission.
func messageID(ourID string) string {
	return uuid.NewSHA1(messageNamespace, []byte(ourID)).String()
}

func permanent(code, format string, args ...any) *provider.Error {
	return &provider.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func temporary(format string, args ...any) *provider.Error {
	return &provider.Error{Code: domain.CodeProviderError, Message: fmt.Sprintf(format, args...), Temporary: true}
}
