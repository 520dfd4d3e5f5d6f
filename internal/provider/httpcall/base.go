package httpcall

import (
	"context"
	"net/url"
	"time"

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

// IsURL reports whether s is an absolute http or https address.
func IsURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// Base is the part of provider.Adapter that every adapter over an HTTP API
// has alike: a name, nothing to start (the platform is reached per
// request), idle connections to let go at stop, and the health of its
// calls. An adapter embeds it and adds Submit.
type Base struct {
	// Call makes the adapter's requests.
	Call *Client
	name string
}

// NewBase makes the Base of the adapter named name, calling with c.
func NewBase(name string, c *Client) Base { return Base{Call: c, name: name} }

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
