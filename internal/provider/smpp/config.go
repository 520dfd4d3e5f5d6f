package smpp

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net"
	"strconv"
	"time"

	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Config describes one SMPP provider: an SMSC account with one or more
// transceiver binds. Zero values take the defaults noted on each field.
type Config struct {
	// Name is the provider's name in webhooks and metrics (default "smpp").
	Name string `yaml:"-"`
	// Addr is the SMSC's host:port.
	Addr string `yaml:"addr"`
	// SystemID (up to 15 characters), Password (up to 8) and SystemType (up
	// to 12, often empty) are sent in bind_transceiver.
	SystemID   string `yaml:"systemId"`
	Password   string `yaml:"password"`
	SystemType string `yaml:"systemType"`
	// Binds is the number of transceiver sessions (default 1, at most
	// maxBinds). Requests are spread over the bound ones round-robin.
	Binds int `yaml:"binds"`
	// Window is the number of requests one bind may have awaiting a
	// response (default 10).
	Window int `yaml:"window"`
	// TPS caps submit_sm per second over all binds; 0 means no cap.
	TPS float64 `yaml:"tps"`
	// SourceAddr is the sender used when a message names none.
	SourceAddr string `yaml:"sourceAddr"`
	// EnquireLinkInterval is the idle time after which enquire_link checks
	// the link (default 30s).
	EnquireLinkInterval time.Duration `yaml:"-"`
	// RequestTimeout is how long a request waits for its response
	// (default 10s); it also bounds dialling and binding.
	RequestTimeout time.Duration `yaml:"timeout"`
	// GSMPacking is how data_coding 0 text is laid out (default Unpacked).
	GSMPacking pdu.GSMPacking `yaml:"gsmPacking"`

	// ReconnectMin and ReconnectMax bound the exponential backoff between
	// bind attempts (defaults 1s and 1m).
	ReconnectMin, ReconnectMax time.Duration `yaml:"-"`
	// RetryMin and RetryMax bound the backoff between submit attempts after
	// a transient error (defaults 250ms and 5s).
	RetryMin, RetryMax time.Duration `yaml:"-"`
	// SubmitTimeout bounds a Submit whose context has no deadline
	// (default 1m).
	SubmitTimeout time.Duration `yaml:"-"`
	// ReassemblyTimeout is how long the parts of an incomplete inbound
	// message are kept (default 10m).
	ReassemblyTimeout time.Duration `yaml:"-"`
	// RelativeValidity sends validity_period in the relative format instead
	// of absolute UTC time.
	RelativeValidity bool `yaml:"-"`
}

// maxBinds caps Config.Binds: more sessions than this to one SMSC account
// are refused by carriers long before they help throughput.
const maxBinds = 32

// OwnSender is SourceAddr: what a message that names no sender goes out
// from (provider.OwnSender).
func (c Config) OwnSender() string { return c.SourceAddr }

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	p := provider.Checking(TypeName)
	if c.Addr == "" {
		p.Add("Addr", "is required (host:port of the SMSC)")
	} else if host, port, err := net.SplitHostPort(c.Addr); err != nil || host == "" {
		p.Add("Addr", "%q is not host:port", c.Addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		p.Add("Addr", "%q has no valid port", c.Addr)
	}
	p.Required("SystemID", c.SystemID)
	for _, f := range []struct {
		name, value string
		max         int
	}{{"SystemID", c.SystemID, pdu.MaxSystemID}, {"Password", c.Password, pdu.MaxPassword},
		{"SystemType", c.SystemType, pdu.MaxSystemType}} {
		if len(f.value) > f.max-1 {
			p.Add(f.name, "is %d characters; SMPP allows %d", len(f.value), f.max-1)
		}
	}
	if c.SourceAddr != "" {
		if _, _, _, err := sourceAddress(c.SourceAddr); err != nil {
			p.Add("SourceAddr", "%v", err)
		}
	}
	if c.Binds < 0 || c.Binds > maxBinds {
		p.Add("Binds", "is %d; use 1 to %d (0 for the default 1)", c.Binds, maxBinds)
	}
	if c.Window < 0 || c.Window > 1000 {
		p.Add("Window", "is %d; use 1 to 1000 (0 for the default 10)", c.Window)
	}
	if c.TPS < 0 {
		p.Add("TPS", "is %v; use 0 for no cap", c.TPS)
	}
	switch c.GSMPacking {
	case "", pdu.Unpacked, pdu.Packed:
	default:
		p.Add("GSMPacking", "is %q; use %q or %q", c.GSMPacking, pdu.Unpacked, pdu.Packed)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"EnquireLinkInterval", c.EnquireLinkInterval}, {"RequestTimeout", c.RequestTimeout},
		{"ReconnectMin", c.ReconnectMin}, {"ReconnectMax", c.ReconnectMax}, {"RetryMin", c.RetryMin},
		{"RetryMax", c.RetryMax}, {"SubmitTimeout", c.SubmitTimeout}, {"ReassemblyTimeout", c.ReassemblyTimeout}} {
		p.Duration(d.name, d.v)
	}
	return p.Err()
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	provider.Default(&c.Name, "smpp")
	provider.Default(&c.Binds, 1)
	provider.Default(&c.Window, 10)
	provider.Default(&c.GSMPacking, pdu.Unpacked)
	provider.Default(&c.EnquireLinkInterval, 30*time.Second)
	provider.Default(&c.RequestTimeout, 10*time.Second)
	provider.Default(&c.ReconnectMin, time.Second)
	provider.Default(&c.ReconnectMax, time.Minute)
	provider.Default(&c.RetryMin, 250*time.Millisecond)
	provider.Default(&c.RetryMax, 5*time.Second)
	provider.Default(&c.SubmitTimeout, time.Minute)
	provider.Default(&c.ReassemblyTimeout, 10*time.Minute)
	c.ReconnectMax = max(c.ReconnectMax, c.ReconnectMin)
	c.RetryMax = max(c.RetryMax, c.RetryMin)
	return c
}

// Clock is the time source for rate limiting, backoff, timestamps and
// reassembly expiry. Network deadlines (RequestTimeout, enquire_link) use
// real time, since they race real sockets.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Option adjusts a Client for tests or embedding.
type Option func(*options)

type options struct {
	clock Clock
	log   *slog.Logger
	rand  func() float64
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
}

// WithClock replaces the real clock.
func WithClock(c Clock) Option { return func(o *options) { o.clock = c } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithRand sets the source of backoff jitter, a function returning values
// in [0, 1); tests pass a constant to make backoff deterministic.
func WithRand(f func() float64) Option { return func(o *options) { o.rand = f } }

// WithDialer replaces net.Dialer.DialContext.
func WithDialer(d func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return func(o *options) { o.dial = d }
}

func buildOptions(opts []Option) options {
	o := options{clock: realClock{}, log: slog.Default(), rand: rand.Float64}
	for _, f := range opts {
		f(&o)
	}
	if o.dial == nil {
		var d net.Dialer
		o.dial = d.DialContext
	}
	return o
}
