package rbm

import (
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/provider"
)

// DefaultAPIURL is Google's RCS Business Messaging API.
const DefaultAPIURL = "https://rcsbusinessmessaging.googleapis.com/v1"

// Scope is the OAuth 2.0 scope the service account's tokens are asked for.
const Scope = "https://www.googleapis.com/auth/rcsbusinessmessaging"

// Config describes one RBM agent. Zero values take the defaults noted on
// each field.
type Config struct {
	// Name is the provider's name in webhooks and metrics (default "rbm").
	Name string `yaml:"-"`
	// AgentID is the agent's id (agentId in every call).
	AgentID string `yaml:"agentId"`
	// Credentials is the service account's JSON key, as Google issues it.
	// Its client_email, private_key and token_uri sign and send the JWT
	// assertion that buys access tokens.
	Credentials []byte `yaml:"-"`
	// CredentialsFile is the path of that key, read when the adapter is
	// built and Credentials is empty (the file's and the environment's
	// form: the key stays a file of its own, with its own permissions).
	CredentialsFile string `yaml:"credentials"`
	// ClientToken is the agent webhook's client token: it answers the
	// platform's validation request and keys X-Goog-Signature.
	ClientToken string `yaml:"clientToken"`
	// APIURL is the API's base, ending in the version (default
	// DefaultAPIURL). UploadURL is where files are uploaded (default: the
	// API URL with "/upload" before its last segment, as Google's is).
	APIURL    string `yaml:"apiUrl"`
	UploadURL string `yaml:"-"`
	// RatePerSecond caps the requests to the platform; 0 means no cap.
	RatePerSecond float64 `yaml:"ratePerSecond"`
	// Concurrency is the number of requests in flight at once (default 8).
	Concurrency int `yaml:"-"`
	// RequestTimeout bounds each HTTP request, token requests included
	// (default 10s).
	RequestTimeout time.Duration `yaml:"timeout"`
	// FallbackAfter is how long a message with an SMS fallback may stay
	// undelivered before it is taken back and sent as SMS (default 10m);
	// never more than half of what is left of its validity, so that the
	// SMS has time too.
	FallbackAfter time.Duration `yaml:"fallbackAfter"`
	// Attempts is how often one request is tried when the platform
	// answers 429 or 5xx or cannot be reached (default 3); RetryMin and
	// RetryMax bound the backoff between tries (defaults 250ms and 4s).
	Attempts           int           `yaml:"-"`
	RetryMin, RetryMax time.Duration `yaml:"-"`
	// MaxWebhookBody caps the platform's webhook calls (default 1 MiB).
	MaxWebhookBody int64 `yaml:"-"`
}

// OwnSender is the agent, which a message that names no agent goes out
// from (provider.OwnSender).
func (c Config) OwnSender() string { return c.AgentID }

// Validate reports every problem of c at once. Secrets are never part of
// the text.
func (c Config) Validate() error {
	p := provider.Checking(TypeName)
	p.Required("AgentID", c.AgentID)
	switch {
	case len(c.Credentials) == 0 && c.CredentialsFile == "":
		p.Add("Credentials", "is required: the service account's JSON key (credentials: the path of the file)")
	case len(c.Credentials) == 0: // read when the adapter is built
	default:
		if _, err := parseCredentials(c.Credentials); err != nil {
			p.Also(err)
		}
	}
	if c.ClientToken == "" {
		p.Add("ClientToken", "is required: it verifies the platform's webhook calls")
	}
	p.URL("APIURL", c.APIURL)
	p.URL("UploadURL", c.UploadURL)
	if c.RatePerSecond < 0 {
		p.Add("RatePerSecond", "is %v; use 0 for no cap", c.RatePerSecond)
	}
	if c.Concurrency < 0 || c.Attempts < 0 || c.MaxWebhookBody < 0 {
		p.Add("Concurrency, Attempts and MaxWebhookBody", "must not be negative")
	}
	p.Duration("RequestTimeout", c.RequestTimeout)
	p.Duration("FallbackAfter", c.FallbackAfter)
	p.Duration("RetryMin", c.RetryMin)
	p.Duration("RetryMax", c.RetryMax)
	return p.Err()
}

func (c Config) withDefaults() Config {
	provider.Default(&c.Name, "rbm")
	provider.Default(&c.APIURL, DefaultAPIURL)
	c.APIURL = strings.TrimRight(c.APIURL, "/")
	provider.Default(&c.UploadURL, uploadURL(c.APIURL))
	c.UploadURL = strings.TrimRight(c.UploadURL, "/")
	provider.Default(&c.Concurrency, 8)
	provider.Default(&c.Attempts, 3)
	provider.Default(&c.MaxWebhookBody, 1<<20)
	provider.Default(&c.RequestTimeout, 10*time.Second)
	provider.Default(&c.FallbackAfter, 10*time.Minute)
	provider.Default(&c.RetryMin, 250*time.Millisecond)
	provider.Default(&c.RetryMax, 4*time.Second)
	c.RetryMax = max(c.RetryMax, c.RetryMin)
	return c
}

// uploadURL puts "/upload" before the last segment of the API URL's path,
// as Google's upload endpoint is: https://host/v1 → https://host/upload/v1.
func uploadURL(api string) string {
	u, err := url.Parse(api)
	if err != nil {
		return api
	}
	if i := strings.LastIndex(u.Path, "/"); i >= 0 {
		u.Path = u.Path[:i] + "/upload" + u.Path[i:]
	} else {
		u.Path = "/upload"
	}
	return u.String()
}

// Option adjusts an Adapter for tests or embedding.
type Option func(*options)

type options struct {
	log   *slog.Logger
	now   func() time.Time
	rand  func() float64
	http  *http.Client
	files Files
	cache MediaCache
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithClock sets the clock of fallback deadlines and timestamps (default
// time.Now). Timeouts and backoff run on real time: they race sockets.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithRand sets the source of backoff jitter, values in [0, 1).
func WithRand(f func() float64) Option { return func(o *options) { o.rand = f } }

// WithHTTPClient replaces the HTTP client (its Timeout is kept if set).
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.http = c } }

// WithFiles lets the adapter send files integrators uploaded (mediaId);
// without it such messages are refused.
func WithFiles(f Files) Option { return func(o *options) { o.files = f } }

// WithMediaCache keeps the platform's names of uploaded files in storage,
// so that other nodes and later runs send them without uploading again.
func WithMediaCache(c MediaCache) Option { return func(o *options) { o.cache = c } }

func buildOptions(cfg Config, opts []Option) options {
	o := options{log: slog.Default(), now: time.Now, rand: rand.Float64}
	for _, f := range opts {
		f(&o)
	}
	if o.http == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = cfg.Concurrency // keep a connection for each request in flight
		o.http = &http.Client{Timeout: cfg.RequestTimeout, Transport: t}
	}
	return o
}
