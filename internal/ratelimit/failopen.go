package ratelimit

import (
	"context"
	"time"
)

// clocked is implemented by the backends of this package so that a FailOpen
// wrapper reports the same window edges as the backend it wraps.
type clocked interface{ clock() time.Time }

// FailOpen wraps l so that a backend failure never refuses traffic: on error
// the request is allowed, reported as if its windows were untouched
// (Remaining = Limit), onError (if non-nil) is told, and no error is returned.
// Refusing every request because Redis is down would turn a degraded limiter
// into a full outage.
func FailOpen(l Limiter, onError func(error)) Limiter {
	now := time.Now
	if c, ok := l.(clocked); ok {
		now = c.clock
	}
	return &failOpen{l: l, onError: onError, now: now}
}

var _ Inspector = (*failOpen)(nil)

type failOpen struct {
	l       Limiter
	onError func(error)
	now     func() time.Time
}

func (f *failOpen) Allow(ctx context.Context, r Request) (Decision, error) {
	d, err := f.l.Allow(ctx, r)
	if err == nil {
		return d, nil
	}
	if f.onError != nil {
		f.onError(err)
	}
	return Untouched(r, f.now()), nil
}

// Usage reads through to the wrapped limiter when it can; on error, or when
// it keeps no readable counts, the windows are reported untouched, matching
// what Allow reports while failing open.
func (f *failOpen) Usage(ctx context.Context, key string, tierLimit int, typeLimits map[string]int) (Usage, error) {
	if in, ok := f.l.(Inspector); ok {
		u, err := in.Usage(ctx, key, tierLimit, typeLimits)
		if err == nil {
			return u, nil
		}
		if f.onError != nil {
			f.onError(err)
		}
	}
	return Unused(f.now(), tierLimit, typeLimits), nil
}
