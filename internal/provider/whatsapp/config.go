package whatsapp

import (
	"cmp"
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/backoff"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
)

// DefaultAPIURL is the Graph API version this adapter speaks.
const DefaultAPIURL = "https://graph.facebook.com/v23.0"

// Config describes one WhatsApp provider: a business phone number of a
// WhatsApp Business Account. Zero values take the defaults noted.
type Config struct {
	// Name is the provider's name in webhooks and metrics (default
	// "whatsapp").
	Name string `yaml:"-"`
	// APIURL is the Graph API base including its version (default
	// DefaultAPIURL).
	APIURL string `yaml:"apiUrl"`
	// PhoneNumberID is the platform's id of the sending business number.
	PhoneNumberID string `yaml:"phoneNumberId"`
	// Number is that business number itself, digits only (optional). An
	// account that holds it as an approved sender is then the only one
	// whose messages this provider takes.
	Number string `yaml:"number"`
	// Token is the access token (a system user's), sent as a bearer token.
	Token string `yaml:"token"`
	// AppSecret is the Meta app's secret: the key of X-Hub-Signature-256.
	AppSecret string `yaml:"appSecret"`
	// VerifyToken is the secret the platform echoes in the webhook
	// verification handshake.
	VerifyToken string `yaml:"verifyToken"`
	// UserAgent identifies us to the platform (default UserAgent("")).
	UserAgent string `yaml:"-"`
	// RatePerSecond caps requests to the platform (default 80, the
	// platform's standard throughput per business number; negative: no cap).
	RatePerSecond float64 `yaml:"ratePerSecond"`
	// RequestTimeout bounds one HTTP request (default 10s).
	RequestTimeout time.Duration `yaml:"timeout"`
	// Concurrency is the number of requests in flight at once (default 16).
	Concurrency int `yaml:"-"`
	// MaxAttempts is how often one request is tried within a Submit when
	// the platform answers with a transient error (default 3); what still
	// fails is left to the dispatcher's later retries.
	MaxAttempts int `yaml:"-"`
	// RetryMin and RetryMax bound the backoff between attempts (defaults
	// 500ms and 8s); rate-limit answers wait at least four times RetryMin.
	RetryMin, RetryMax time.Duration `yaml:"-"`
	// CTAURLButtons sends a url button as the platform's interactive
	// call-to-action message ("cta_url"). Off by default: that type is not
	// in the platform's published OpenAPI description (v23.0), so the
	// default keeps to what the document allows and sends the title and the
	// address as text with a link preview, where WhatsApp makes it tappable.
	CTAURLButtons bool `yaml:"ctaUrlButtons"`
	// MediaReuse is how long a file uploaded to the platform is sent by
	// its platform id before it is uploaded again (default 25 days: the
	// platform keeps uploads for 30).
	MediaReuse time.Duration `yaml:"-"`
}

// OwnSender is the business number every message of this provider goes
// out from (provider.OwnSender): Number, as accounts hold it, else the
// number's id.
func (c Config) OwnSender() string { return cmp.Or(c.Number, c.PhoneNumberID) }

// OnlyOwnSender is true: a message's from does not choose among business
// numbers, every message goes out from this one (provider.OnlyOwnSender).
func (c Config) OnlyOwnSender() bool { return true }

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	p := provider.Checking(TypeName)
	p.Required("PhoneNumberID", c.PhoneNumberID)
	p.Required("Token", c.Token)
	p.Required("AppSecret", c.AppSecret)
	p.Required("VerifyToken", c.VerifyToken)
	if c.PhoneNumberID != "" && !digits.MatchString(c.PhoneNumberID) {
		p.Add("PhoneNumberID", "must be the platform's numeric id of the phone number, not the number itself")
	}
	if c.Number != "" && !digits.MatchString(c.Number) {
		p.Add("Number", "must be the business phone number, digits only")
	}
	p.URL("APIURL", c.APIURL)
	if c.Concurrency < 0 || c.MaxAttempts < 0 {
		p.Add("Concurrency and MaxAttempts", "must not be negative")
	}
	p.Duration("RequestTimeout", c.RequestTimeout)
	p.Duration("RetryMin", c.RetryMin)
	p.Duration("RetryMax", c.RetryMax)
	p.Duration("MediaReuse", c.MediaReuse)
	return p.Err()
}

var digits = regexp.MustCompile(`^[0-9]+$`)

func (c Config) withDefaults() Config {
	provider.Default(&c.Name, "whatsapp")
	provider.Default(&c.APIURL, DefaultAPIURL)
	c.APIURL = strings.TrimRight(c.APIURL, "/")
	provider.Default(&c.UserAgent, UserAgent(""))
	provider.Default(&c.RatePerSecond, 80)
	provider.Default(&c.Concurrency, 16)
	provider.Default(&c.MaxAttempts, 3)
	provider.Default(&c.RequestTimeout, 10*time.Second)
	provider.Default(&c.RetryMin, 500*time.Millisecond)
	provider.Default(&c.RetryMax, 8*time.Second)
	provider.Default(&c.MediaReuse, 25*24*time.Hour)
	c.RetryMax = max(c.RetryMax, c.RetryMin)
	return c
}

var semver = regexp.MustCompile(`^v?([0-9]+\.[0-9]+\.[0-9]+)(.*)$`)

// UserAgent is msgsvc's User-Agent for a version such as "0.5.0-dev": the
// platform's document wants name/1.2.3 with an optional ";key=value", so
// a pre-release or build suffix goes there ("msgsvc/0.5.0;v=0.5.0-dev").
func UserAgent(version string) string {
	m := semver.FindStringSubmatch(version)
	if m == nil {
		return "msgsvc/0.0.0" + uaSuffix(version)
	}
	if m[2] == "" {
		return "msgsvc/" + m[1]
	}
	return "msgsvc/" + m[1] + uaSuffix(version)
}

func uaSuffix(version string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '-'
	}, strings.TrimPrefix(version, "v"))
	if clean == "" {
		return ""
	}
	return ";v=" + clean
}

// Option adjusts a Client for tests or embedding.
type Option func(*options)

type options struct {
	log   *slog.Logger
	http  *http.Client
	now   func() time.Time
	rand  func() float64
	sleep func(ctx context.Context, d time.Duration) error
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithHTTPClient replaces the HTTP client (its Timeout is left alone;
// Config.RequestTimeout bounds each request anyway).
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.http = c } }

// WithClock replaces time.Now for timestamps, rate spacing and media reuse.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithRand sets the source of backoff jitter, values in [0, 1).
func WithRand(f func() float64) Option { return func(o *options) { o.rand = f } }

// WithSleep replaces the wait between attempts and for the rate cap.
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return func(o *options) { o.sleep = f }
}

func buildOptions(opts []Option) options {
	o := options{log: slog.Default(), now: time.Now, rand: rand.Float64, sleep: backoff.Sleep}
	for _, f := range opts {
		f(&o)
	}
	if o.http == nil {
		o.http = httpcall.NewHTTPClient()
	}
	return o
}
