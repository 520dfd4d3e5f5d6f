// Package ratelimit implements the integration API's fixed-window rate limits
// (docs/api.md, rate limits), a per-address counter of failed
// authentications and a short-lived set of keys known to have authenticated
// from an address. Memory serves a single node; Redis shares the windows
// between every node of a deployment.
//
// Windows are fixed, one minute long and aligned to whole minutes of Unix
// time. A limit of 0 (or less) means unlimited: such a window never refuses,
// is not counted, and is reported with Limit 0 and Remaining 0 so that header
// code can recognise it by Limit == 0.
package ratelimit

import (
	"context"
	"errors"
	"strings"
	"time"
)

// ErrInvalidKey is returned for an empty key or one containing '{' or '}'.
// Braces are refused because the Redis backend wraps keys in a cluster hash
// tag, and an address or account id never legitimately contains them.
var ErrInvalidKey = errors.New("ratelimit: key must be non-empty and contain no braces")

// Window describes one window as the rate-limit headers report it.
type Window struct {
	Limit     int       // 0 when the window is unlimited
	Remaining int       // never negative; 0 when unlimited
	Reset     time.Time // start of the next window
}

// Decision is the outcome of one rate-limit check.
type Decision struct {
	Allowed bool
	Tier    Window
	// Type is the request-type window, or a copy of Tier when the request
	// had no type.
	Type Window
	// RetryAfter is set only when refused: the time until the exhausted
	// window resets, rounded up to whole seconds and at least one second.
	RetryAfter time.Duration
}

// Request is one request to check against its account's windows.
type Request struct {
	Key       string // the account, e.g. its id
	TierLimit int    // requests per minute for the account's tier; 0 = unlimited
	Type      string // request type ("send", "status", ...); empty = tier only
	TypeLimit int    // requests per minute for Type; 0 = unlimited
}

// Limiter decides whether a request fits its windows, counting it if so.
// The tier and type windows are checked and consumed atomically: a refused
// request consumes nothing from either.
type Limiter interface {
	Allow(ctx context.Context, r Request) (Decision, error)
}

// Failures counts failed authentications per client address in one fixed
// one-minute window. The decision carries that window as both Tier and Type.
type Failures interface {
	// Count records one failure unless the window is already used up; it
	// refuses (and records nothing) when limit failures are already counted.
	Count(ctx context.Context, key string, limit int) (Decision, error)
	// Exceeded reports the window without counting: Allowed is false once
	// limit failures have been counted in the current window.
	Exceeded(ctx context.Context, key string, limit int) (Decision, error)
}

// KnownSet remembers which API keys have authenticated from an address, for
// 24 hours after the most recent Remember, so that an address locked out for
// failures can still serve keys that were already good there.
type KnownSet interface {
	Remember(ctx context.Context, addrKey, keyID string) error
	Known(ctx context.Context, addrKey, keyID string) (bool, error)
}

// Usage is an account's windows as they stand, read without counting.
type Usage struct {
	Tier Window
	// Types holds one window per request type asked for.
	Types map[string]Window
}

// Inspector reads windows without counting, for a client asking about its
// own limits.
type Inspector interface {
	// Usage reports key's tier window (limit tierLimit) and, for every entry
	// of typeLimits, that request type's window in the current minute.
	// Limits of 0 or less are unlimited and reported as Limit 0.
	Usage(ctx context.Context, key string, tierLimit int, typeLimits map[string]int) (Usage, error)
}

// Backend is everything a rate-limit backend provides; Memory and Redis both
// implement it.
type Backend interface {
	Limiter
	Inspector
	Failures
	KnownSet
	// Ping reports whether the backend can serve requests (for readiness).
	Ping(ctx context.Context) error
}

// knownTTL is how long a key stays known at an address after Remember.
const knownTTL = 24 * time.Hour

func checkKey(key string) error {
	if key == "" || strings.ContainsAny(key, "{}") {
		return ErrInvalidKey
	}
	return nil
}

// windowID numbers the minute containing t (floor division, so times before
// 1970 would still land in the right window).
func windowID(t time.Time) int64 {
	s := t.Unix()
	id := s / 60
	if s%60 < 0 {
		id--
	}
	return id
}

// windowReset is when the window after id begins.
func windowReset(id int64) time.Time {
	return time.Unix((id+1)*60, 0).UTC()
}

// retryAfter rounds the wait until reset up to whole seconds, at least 1s.
func retryAfter(now, reset time.Time) time.Duration {
	d := reset.Sub(now)
	if d <= time.Second {
		return time.Second
	}
	return (d + time.Second - 1).Truncate(time.Second)
}

// normalized maps negative limits to 0 (unlimited) so backends see one form.
func (r Request) normalized() Request {
	r.TierLimit = max(r.TierLimit, 0)
	r.TypeLimit = max(r.TypeLimit, 0)
	return r
}

func (r Request) typed() bool { return r.Type != "" }

// admits reports whether one more request fits, given the counts used so far.
func (r Request) admits(tierUsed, typeUsed int) bool {
	if r.TierLimit > 0 && tierUsed >= r.TierLimit {
		return false
	}
	if r.typed() && r.TypeLimit > 0 && typeUsed >= r.TypeLimit {
		return false
	}
	return true
}

// decision builds the reported outcome from the counts after the check.
func (r Request) decision(allowed bool, tierUsed, typeUsed int, now, reset time.Time) Decision {
	d := Decision{Allowed: allowed, Tier: window(r.TierLimit, tierUsed, reset)}
	d.Type = d.Tier
	if r.typed() {
		d.Type = window(r.TypeLimit, typeUsed, reset)
	}
	if !allowed {
		d.RetryAfter = retryAfter(now, reset)
	}
	return d
}

func window(limit, used int, reset time.Time) Window {
	if limit <= 0 {
		return Window{Reset: reset}
	}
	return Window{Limit: limit, Remaining: max(limit-used, 0), Reset: reset}
}

// failureRequest expresses a failure window as a tier-only request so the
// failure counter shares the limiter's arithmetic.
func failureRequest(key string, limit int) Request {
	return Request{Key: key, TierLimit: limit}.normalized()
}

// Untouched is the decision reporting r's windows as if nothing had been
// counted in the minute containing now: what a caller shows when no backend
// could be asked (fail-open, or no limiter configured).
func Untouched(r Request, now time.Time) Decision {
	r = r.normalized()
	return r.decision(true, 0, 0, now, windowReset(windowID(now)))
}

// Unused is the Usage of an account nothing has been counted for in the
// minute containing now.
func Unused(now time.Time, tierLimit int, typeLimits map[string]int) Usage {
	reset := windowReset(windowID(now))
	u := Usage{Tier: window(max(tierLimit, 0), 0, reset), Types: make(map[string]Window, len(typeLimits))}
	for typ, limit := range typeLimits {
		u.Types[typ] = window(max(limit, 0), 0, reset)
	}
	return u
}
