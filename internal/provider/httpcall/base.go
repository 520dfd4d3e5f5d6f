package httpcall

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Tuning is what a configuration file may tune of an adapter over an HTTP
// API, embedded inline in each adapter's Config so the three read the same
// keys and check them the same way.
type Tuning struct {
	// RequestTimeout bounds one request (default 10s).
	RequestTimeout time.Duration `yaml:"timeout"`
	// MaxAttempts, RetryMin, RetryMax and MaxRetryAfter tune the retries
	// within one hand-over (defaults 3, 500ms, 8s, 10s); tests set them.
	MaxAttempts                       int           `yaml:"-"`
	RetryMin, RetryMax, MaxRetryAfter time.Duration `yaml:"-"`
}

// Negative reports a setting below zero, which no default can mend.
func (t Tuning) Negative() bool {
	return t.RequestTimeout < 0 || t.RetryMin < 0 || t.RetryMax < 0 || t.MaxRetryAfter < 0 || t.MaxAttempts < 0
}

// Settings are the Client's settings for the adapter named name of the
// platform peer ("Twilio").
func (t Tuning) Settings(peer, name string) Settings {
	return Settings{Provider: peer, Name: name, Timeout: t.RequestTimeout, MaxAttempts: t.MaxAttempts,
		RetryMin: t.RetryMin, RetryMax: t.RetryMax, MaxRetryAfter: t.MaxRetryAfter}
}

// Problems gathers every problem of the configuration of an adapter over
// HTTP, whose Tuning is checked last.
type Problems struct{ *provider.Problems }

// Checking starts the problems of a configuration of type typ.
func Checking(typ string) Problems { return Problems{provider.Checking(typ)} }

// Err is every problem noted, joined; nil when none. The tuning is
// checked last, as every adapter has one.
func (p Problems) Err(t Tuning) error {
	if t.Negative() {
		p.Add("RequestTimeout", "and the retry settings must not be negative")
	}
	return p.Problems.Err()
}

// Account is what the configurations of the SMS adapters over HTTP have
// alike, embedded inline in each one's Config so the three read the same
// keys.
type Account struct {
	// Name is the provider's name in webhooks and metrics (default the
	// type's name).
	Name string `yaml:"-"`
	// From is the sender (a number, or an alphanumeric id where the
	// platform takes one) used when a message names none.
	From string `yaml:"from"`
	// APIURL is the API's base (default the adapter's DefaultAPIURL).
	APIURL string `yaml:"apiUrl"`
	// PublicURL is the address the platform calls back
	// (https://gw.example.com), named in each send; each adapter's Config
	// says what it is for there and whether it is required.
	PublicURL string `yaml:"publicUrl"`
	// Tuning holds the request timeout and the retries.
	Tuning `yaml:",inline"`
}

// EnvAccount is the account of an environment shortcut whose variables
// start with prefix (MSGSVC_TWILIO_): its FROM and API_URL, and the node's
// MSGSVC_PUBLIC_URL.
func EnvAccount(e *provider.Env, prefix string) Account {
	return Account{From: e.String(prefix + "FROM"), APIURL: e.String(prefix + "API_URL"), PublicURL: e.String("MSGSVC_PUBLIC_URL")}
}

func (a *Account) setName(name string) { a.Name = name }

// OwnSender is From, "" when the platform picks the number from a pool
// (provider.OwnSender).
func (a Account) OwnSender() string { return a.From }

// Defaults is a with the name typ and the API address api where it sets
// none, without the slashes that would double in the paths joined to its
// addresses.
func (a Account) Defaults(typ, api string) Account {
	if a.Name == "" {
		a.Name = typ
	}
	if a.APIURL == "" {
		a.APIURL = api
	}
	a.APIURL, a.PublicURL = strings.TrimRight(a.APIURL, "/"), strings.TrimRight(a.PublicURL, "/")
	return a
}

// Base is the part of provider.Adapter that every adapter over an HTTP API
// has alike: a name, nothing to start (the platform is reached per
// request), idle connections to let go at stop, the health of its calls,
// the Sink of its callbacks and its User-Agent. An adapter embeds it and
// gives it its send and receive.
type Base struct {
	// Call makes the adapter's requests.
	Call *Client
	// Sink takes the statuses and replies of the callbacks.
	Sink provider.Sink
	// UserAgent names us to the platform.
	UserAgent string
	name      string
	send      func(context.Context, provider.Outbound) provider.Result
	receive   func(http.ResponseWriter, *http.Request, []byte)
}

// NewBase makes the Base of the adapter named name, calling with c.
func NewBase(name string, c *Client) Base { return Base{Call: c, name: name, UserAgent: "msgsvc"} }

// Open makes the Base of adapter a of the platform peer ("Twilio"), with
// the name and tuning of its account acct: a Client, the Sink and version
// of d, send for each message Submit takes and receive for each callback's
// body. It returns a, or the first error (invalid is the configuration's).
func Open[A any](a *A, base *Base, invalid error, peer string, acct Account, d provider.Deps, hc Deps,
	send func(context.Context, provider.Outbound) provider.Result, receive func(http.ResponseWriter, *http.Request, []byte)) (*A, error) {
	if err := provider.Usable(strings.ToLower(peer), invalid, d.Sink); err != nil {
		return nil, err
	}
	*base = NewBase(acct.Name, New(acct.Settings(peer, acct.Name), hc))
	base.Sink, base.send, base.receive = d.Sink, send, receive
	if d.Version != "" {
		base.UserAgent += "/" + d.Version
	}
	return a, nil
}

// Submit sends each message and returns one result per message, in
// order: the platform's id as Ref, or the error.
func (b Base) Submit(ctx context.Context, msgs []provider.Outbound) []provider.Result {
	return b.Call.Each(ctx, msgs, b.send)
}

// DepsOf are the Client's dependencies of the service's.
func DepsOf(d provider.Deps) Deps { return Deps{HTTP: d.HTTP, Now: d.Now, Log: d.Log} }

// Name is the provider's name in webhooks and metrics.
func (b Base) Name() string { return b.name }

// Start does nothing: the platform is reached per request.
func (b Base) Start(context.Context) error { return nil }

// Stop lets idle connections go.
func (b Base) Stop(context.Context) error {
	b.Call.Close()
	return nil
}

// Health is one line for /readyz.
func (b Base) Health() provider.Health { return b.Call.Health() }

// Webhook is the receiver of the platform's callbacks: a POST whose body
// the adapter's receive checks and records.
func (b Base) Webhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if body, ok := ReadCallback(w, r); ok {
			b.receive(w, r, body)
		}
	})
}

// Header is a request's header: a body of contentType, an answer in
// JSON, the User-Agent and the credentials in auth (an Authorization
// value; "" when they go in the body).
func (b Base) Header(contentType, auth string) http.Header {
	h := http.Header{"Content-Type": {contentType}, "Accept": {"application/json"}, "User-Agent": {b.UserAgent}}
	if auth != "" {
		h.Set("Authorization", auth)
	}
	return h
}

// Form and JSON are the content types of the requests.
const (
	Form = "application/x-www-form-urlencoded"
	JSON = "application/json"
)

// BasicAuth is the Authorization value of user and password.
func BasicAuth(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// Send makes one message's request and reads, with refs, the id(s) the
// platform gave it (every part's when it split the message). An answer
// that took the message but names none is an error not tried again:
// sending again could deliver it twice. what names the missing id in it.
func (b Base) Send(ctx context.Context, req Request, check Check, what string, refs func(body []byte) []string) provider.Result {
	ans, perr := b.Call.Do(ctx, req, check)
	if perr != nil {
		return provider.Result{Err: perr}
	}
	parts := refs(ans.Body)
	if len(parts) == 0 {
		return provider.Result{Err: &provider.Error{Code: domain.CodeProviderError,
			Message: b.Call.s.Provider + " took the message but its answer names no " + what + ": " + Snippet(ans.Body)}}
	}
	r := provider.Result{Ref: parts[0]}
	if len(parts) > 1 {
		r.Parts = parts
	}
	return r
}

// MediaURL is the address of m's media ("" when it has none) for a
// platform that fetches media itself: an uploaded file (mediaId) has no
// public address, since msgsvc does not serve its uploads publicly.
func (b Base) MediaURL(m provider.Outbound) (string, *provider.Error) {
	md := m.Content.Media
	switch {
	case md == nil:
		return "", nil
	case md.URL == "":
		return "", &provider.Error{Code: domain.CodeMediaError, Message: b.Call.s.Provider +
			" fetches MMS media from a public URL and uploaded files (mediaId) have none: send the file by media.url"}
	}
	return md.URL, nil
}

// Nothing is the refusal of a message with no text and no media.
func Nothing() *provider.Error {
	return &provider.Error{Code: domain.CodeRejected, Message: "nothing to send: no text and no media"}
}

// E164 puts the + that the platforms want before a number given without it.
func E164(n string) string {
	if n == "" || strings.HasPrefix(n, "+") {
		return n
	}
	return "+" + n
}

// Codes is an adapter's table of its platform's error codes, in an
// answer's refusal or a callback's failure.
type Codes[K comparable] struct {
	// Ours maps a code to our errorCode.
	Ours map[K]string
	// Temporary are the codes that say "not now" rather than "never".
	Temporary map[K]bool
	// Credentials are the codes that refuse our credentials or account.
	Credentials map[K]bool
}

// Refusal is the error of an answer of peer that refused a message with
// code; a code not listed is REJECTED.
func (c Codes[K]) Refusal(peer string, code K, msg string) *provider.Error {
	switch {
	case c.Temporary[code]:
		return &provider.Error{Code: domain.CodeProviderError, Message: msg, Temporary: true}
	case c.Credentials[code]:
		return CredentialsRefused(peer, msg)
	}
	return &provider.Error{Code: c.Of(code, domain.CodeRejected), Message: msg}
}

// Of is our errorCode for code, def when it is not listed.
func (c Codes[K]) Of(code K, def string) string {
	if ours, ok := c.Ours[code]; ok {
		return ours
	}
	return def
}
