package webhook

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ClientOptions configures NewClient. Zero values select the defaults.
type ClientOptions struct {
	// AllowPrivate lets the client dial loopback and private addresses
	// (MSGSVC_WEBHOOK_ALLOW_PRIVATE; dev mode and tests).
	AllowPrivate bool
	// Timeout bounds a whole attempt, connect to last body byte; the
	// contract counts a delivery as failed after 5s. Default 5s.
	Timeout time.Duration
	// MaxConnsPerHost caps concurrent connections to one receiver, and the
	// idle pool keeps that many warm. Default 64.
	MaxConnsPerHost int
	// UserAgent is sent on requests that do not set their own.
	UserAgent string
}

const (
	defaultTimeout         = 5 * time.Second
	defaultMaxConnsPerHost = 64
	// maxIdleConns bounds idle sockets across all receivers so that a long
	// tail of distinct hosts cannot exhaust file descriptors.
	maxIdleConns = 2048
	// idleConnTimeout closes pooled connections left unused this long.
	idleConnTimeout = 90 * time.Second
	// maxResponseHeaderBytes keeps a hostile receiver from making us
	// buffer large headers; webhook answers need none.
	maxResponseHeaderBytes = 64 << 10
)

// NewClient returns an HTTP client for webhook delivery: no proxy, no
// redirects (a 3xx is returned as the answer), pooled keep-alive
// connections, HTTP/2 when the receiver offers it, and, unless
// AllowPrivate, a refusal of any non-public address at connect time.
// Checking the dialled address rather than the hostname means a DNS answer
// that changes between validation and delivery cannot reach inside.
func NewClient(o ClientOptions) *http.Client {
	o = o.withDefaults()
	dialer := o.dialer()
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true, // a custom DialContext disables it otherwise
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    o.Timeout,
		MaxIdleConns:           max(maxIdleConns, o.MaxConnsPerHost),
		MaxIdleConnsPerHost:    o.MaxConnsPerHost,
		MaxConnsPerHost:        o.MaxConnsPerHost,
		IdleConnTimeout:        idleConnTimeout,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
	}
	var rt http.RoundTripper = tr
	if o.UserAgent != "" {
		rt = &userAgentTransport{base: tr, ua: o.UserAgent}
	}
	return &http.Client{
		Transport: rt,
		Timeout:   o.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// withDefaults fills in the zero settings.
func (o ClientOptions) withDefaults() ClientOptions {
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	if o.MaxConnsPerHost <= 0 {
		o.MaxConnsPerHost = defaultMaxConnsPerHost
	}
	return o
}

// dialer connects within the timeout and, unless AllowPrivate, refuses
// non-public addresses.
func (o ClientOptions) dialer() *net.Dialer {
	d := &net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second}
	if !o.AllowPrivate {
		d.Control = refusePrivate
	}
	return d
}

// refusePrivate is a net.Dialer Control hook: it sees the resolved
// ip:port of every connection attempt, including each address tried by
// Happy Eyeballs.
func refusePrivate(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook: refusing to dial %s %q: %w", network, address, err)
	}
	if err := CheckPublicAddr(ap.Addr()); err != nil {
		return fmt.Errorf("webhook: refusing to dial %s: %w", address, err)
	}
	return nil
}

type userAgentTransport struct {
	base *http.Transport
	ua   string
}

func (t *userAgentTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("User-Agent") == "" {
		// A RoundTripper must not modify the caller's request.
		req = req.Clone(req.Context())
		req.Header.Set("User-Agent", t.ua)
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// pool through this wrapper.
func (t *userAgentTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }
