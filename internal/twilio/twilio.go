// Package twilio serves the Twilio-compatible API (REST API 2010-04-01,
// messaging): Twilio's paths, form parameters, resources, paging and
// error codes over msgsvc's core, so that a customer's Twilio code works
// by changing its base URL and credentials. Everything behind it is the
// native API's: the same sends (intake), reads, cancels and redactions,
// balance, rate limits and allow-lists. It speaks Twilio's wire only; what
// a message is, is the core's.
package twilio

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/message"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
)

// Credentials finds a Twilio credential (AC… or SK…) and its account
// (*store.Store). Not found is domain.ErrNotFound.
type Credentials interface {
	TwilioCredentialBySid(ctx context.Context, sid string) (domain.TwilioCredential, domain.Account, error)
}

// Accounts reads an account afresh (the balance, the approved numbers).
type Accounts interface {
	Account(ctx context.Context, id string) (domain.Account, error)
}

// Numbers keeps what the front knows of an account's numbers: where
// replies to them are posted.
type Numbers interface {
	TwilioNumbers(ctx context.Context, accountID string) ([]domain.TwilioNumber, error)
	SetTwilioNumber(ctx context.Context, n domain.TwilioNumber) error
}

// Sender takes a send (intake.Service is one), as for every front.
type Sender interface {
	Send(ctx context.Context, p domain.Principal, req domain.SendRequest, opt intake.SendOptions) (intake.Outcome, error)
}

// Messages reads, cancels and redacts what was sent, always within a
// scope (message.Service is one).
type Messages interface {
	Get(ctx context.Context, sc message.Scope, messageID string) (domain.Message, error)
	List(ctx context.Context, sc message.Scope, f message.ListFilter) (message.MessagePage, error)
	Cancel(ctx context.Context, sc message.Scope, messageID string) (domain.Message, error)
	Redact(ctx context.Context, sc message.Scope, messageID string) (domain.Message, error)
}

// Eraser redacts one message with a given redaction (tracking.Tracker):
// a DELETE is a redaction that marks the message deleted (see deleted).
type Eraser interface {
	Redact(ctx context.Context, messageID string, r domain.Redaction) (domain.Message, error)
}

// Limiter counts a request against the account's windows, as the native
// API's (ratelimit.Limiter).
type Limiter interface {
	Allow(ctx context.Context, r ratelimit.Request) (ratelimit.Decision, error)
}

// AuthGuard counts failed authentications per client address
// (ratelimit's backends are one).
type AuthGuard interface {
	Count(ctx context.Context, key string, limit int) (ratelimit.Decision, error)
}

// Config wires a Handler.
type Config struct {
	Credentials Credentials
	// Version reads the auth counter (store.AuthVersion, best through a
	// keycache.Counter): it moves whenever a credential is removed or an
	// account's settings change, and the credential cache follows it.
	Version  func(ctx context.Context) (int64, error)
	Accounts Accounts
	Numbers  Numbers
	Sender   Sender
	Messages Messages
	Eraser   Eraser
	// Redaction is the node's redaction (hashes a number, rewrites a
	// webhook body); a DELETE applies it with the deleted mark.
	Redaction domain.Redaction
	Limiter   Limiter
	// Guard counts failed authentications per client address, with the
	// native API's (the same key, so failures on either front count
	// together); nil counts none.
	Guard AuthGuard
	// AuthFailuresPerMinute is the budget of failed authentications per
	// client address (default 30, as the native API's).
	AuthFailuresPerMinute int
	// ClientAddr is the client's address (api.Proxies.ClientAddr); nil
	// takes the TCP peer.
	ClientAddr func(r *http.Request) netip.Addr
	// AllowPrivate lets StatusCallback and SmsUrl name http and private
	// addresses (development), as for the native callbacks.
	AllowPrivate bool
	Now          func() time.Time
	Log          *slog.Logger
}

// Handler is the Twilio-compatible API, mounted at /2010-04-01/.
type Handler struct {
	cfg   Config
	creds *credCache
}

// New makes a Handler.
func New(cfg Config) *Handler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.ClientAddr == nil {
		cfg.ClientAddr = peerAddr
	}
	if cfg.AuthFailuresPerMinute <= 0 {
		cfg.AuthFailuresPerMinute = 30
	}
	return &Handler{cfg: cfg, creds: newCredCache(cfg.Credentials, cfg.Version)}
}

// Base is the path every resource is under.
const Base = "/2010-04-01/"

// Request types of the rate-limit windows (as the native API names them).
const (
	typeSending = "sending"
	typeStatus  = "status"
	typeNone    = ""
)

// route is one resource and method; sid is the resource's own SID ("" for
// lists and the account's singletons).
type route struct {
	name    string
	sid     string
	reqType string
	// cached: the handler checks the auth counter itself in the
	// transaction that acts (a send), so the credential may come from the
	// cache without a read of the counter.
	cached bool
}

// ServeHTTP authenticates, checks the path's AccountSid, the allow-list
// and the rate limits, and serves the resource.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	accountSid, rt, ok := parsePath(r.Method, r.URL.Path)
	c, err := h.authenticate(r, rt.cached)
	if err != nil {
		h.answer(w, r, caller{}, h.authFailure(w, r, err))
		return
	}
	if !ok {
		h.answer(w, r, c, errNotFound)
		return
	}
	if accountSid != c.accountSid {
		// Another account's SID, or none at all: the credential proves
		// nothing for it, and says nothing of whether it exists.
		h.answer(w, r, c, errAuth)
		return
	}
	if rt.name == "" {
		h.answer(w, r, c, fail(http.StatusMethodNotAllowed, codeMethodNotAllowed, "This resource does not take %s.", r.Method))
		return
	}
	if err := h.limit(w, r, c, rt.reqType); err != nil {
		h.answer(w, r, c, err)
		return
	}
	if err := h.serve(w, r, c, rt); err != nil {
		h.answer(w, r, c, err)
	}
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, c caller, rt route) error {
	switch rt.name {
	case "account":
		return h.account(w, r, c)
	case "balance":
		return h.balance(w, r, c)
	case "messages.create":
		return h.createMessage(w, r, c)
	case "messages.list":
		return h.listMessages(w, r, c)
	case "message.fetch":
		return h.fetchMessage(w, r, c, rt.sid)
	case "message.update":
		return h.updateMessage(w, r, c, rt.sid)
	case "message.delete":
		return h.deleteMessage(w, r, c, rt.sid)
	case "numbers.list":
		return h.listNumbers(w, r, c)
	case "number.fetch":
		return h.fetchNumber(w, r, c, rt.sid)
	case "number.update":
		return h.updateNumber(w, r, c, rt.sid)
	}
	return errNotFound
}

// parsePath reads /2010-04-01/Accounts/{AccountSid}[.json|/…]. ok is false
// for a path this front does not serve; a known path with a method it
// does not take has an empty route name.
func parsePath(method, path string) (string, route, bool) {
	rest, found := strings.CutPrefix(path, Base+"Accounts/")
	if !found {
		return "", route{}, false
	}
	segs := strings.Split(rest, "/")
	if acct, isJSON := strings.CutSuffix(segs[0], ".json"); isJSON && len(segs) == 1 {
		return acct, pick(method, route{name: "account", reqType: typeNone}, route{}, route{}), true
	}
	acct := segs[0]
	switch len(segs) {
	case 2:
		switch segs[1] {
		case "Balance.json":
			return acct, pick(method, route{name: "balance", reqType: typeNone}, route{}, route{}), true
		case "Messages.json":
			return acct, pick(method, route{name: "messages.list", reqType: typeStatus},
				route{name: "messages.create", reqType: typeSending, cached: true}, route{}), true
		case "IncomingPhoneNumbers.json":
			return acct, pick(method, route{name: "numbers.list", reqType: typeNone}, route{}, route{}), true
		}
	case 3:
		sid, isJSON := strings.CutSuffix(segs[2], ".json")
		if !isJSON || sid == "" {
			return acct, route{}, false
		}
		switch segs[1] {
		case "Messages":
			rt := pick(method, route{name: "message.fetch", reqType: typeStatus}, route{name: "message.update", reqType: typeSending},
				route{name: "message.delete", reqType: typeSending})
			rt.sid = sid
			return acct, rt, true
		case "IncomingPhoneNumbers":
			rt := pick(method, route{name: "number.fetch", reqType: typeNone}, route{name: "number.update", reqType: typeNone}, route{})
			rt.sid = sid
			return acct, rt, true
		}
	}
	return acct, route{}, false
}

func pick(method string, get, post, del route) route {
	switch method {
	case http.MethodGet, http.MethodHead:
		return get
	case http.MethodPost:
		return post
	case http.MethodDelete:
		return del
	}
	return route{}
}

// authFailure counts a client's failed authentication against its
// address; past the budget the answer is 429 (20429) instead, so that
// guessing credentials costs the guesser, not the database.
func (h *Handler) authFailure(w http.ResponseWriter, r *http.Request, err error) error {
	if h.cfg.Guard == nil || (err != errAuth && err != errIPBlocked) {
		return err
	}
	d, gerr := h.cfg.Guard.Count(r.Context(), "ip:"+h.cfg.ClientAddr(r).String(), h.cfg.AuthFailuresPerMinute)
	if gerr != nil {
		// An outage of the window's backend does not turn into refusals.
		h.cfg.Log.Warn("twilio: auth failure window unavailable", "err", gerr)
		return err
	}
	if d.Allowed {
		return err
	}
	return h.tooMany(w, d)
}

// tooMany is 429 (20429) with Retry-After: whole seconds until the
// exhausted window resets.
func (h *Handler) tooMany(w http.ResponseWriter, d ratelimit.Decision) error {
	secs := max(int((d.RetryAfter+time.Second-1)/time.Second), 1)
	w.Header().Set("Retry-After", itoa(secs))
	return fail(http.StatusTooManyRequests, codeTooManyRequests, "Too Many Requests: retry after %d seconds.", secs)
}

// limit counts the request against the account's windows; 429 with 20429
// when one is exhausted.
func (h *Handler) limit(w http.ResponseWriter, r *http.Request, c caller, reqType string) error {
	if h.cfg.Limiter == nil {
		return nil
	}
	l := c.account.Limits
	req := ratelimit.Request{Key: c.account.ID, TierLimit: l.TierRPM, Type: reqType, TypeLimit: typeLimit(l, reqType)}
	d, err := h.cfg.Limiter.Allow(r.Context(), req)
	if err != nil {
		return err
	}
	if d.Allowed {
		return nil
	}
	return h.tooMany(w, d)
}

func typeLimit(l domain.Limits, reqType string) int {
	switch reqType {
	case typeSending:
		return l.SendRPM
	case typeStatus:
		return l.StatusRPM
	}
	return 0
}

// answer writes an error, logging ours as errors and the client's as
// what an operator looks for when a customer asks why a call failed.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, c caller, err error) {
	e := toError(err)
	attrs := []any{"method", r.Method, "path", r.URL.Path, "status", e.Status, "code", e.Code,
		"accountId", c.account.ID, "credential", c.credSid, "requestId", w.Header().Get("X-Request-Id")}
	switch {
	case e.Status >= 500:
		h.cfg.Log.Error("twilio: request failed", append(attrs, "err", err)...)
	case e.Status == http.StatusTooManyRequests:
		// The limits at work, not a fault: a flood of them would drown
		// the log.
		h.cfg.Log.Debug("twilio: refused", append(attrs, "reason", e.Message)...)
	default:
		h.cfg.Log.Info("twilio: refused", append(attrs, "reason", e.Message)...)
	}
	writeError(w, e)
}
