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
	r = r.normalized()
	now := f.now()
	return r.decision(true, 0, 0, now, windowReset(windowID(now))), nil
}
