// Package backoff is the one retry policy of the service: how long to wait
// before each retry, and when to stop. Every retry loop (the HTTP and SMPP
// adapters, webhook deliveries, receipt questions) is this policy with its
// own parameters, so that a change of jitter or cap is made once.
package backoff

import (
	"context"
	"math"
	"math/rand/v2"
	"time"
)

// Jitter spreads a wait d over [d·(1−Below), d·(1+Above)), so that callers
// that failed together do not come back together.
type Jitter struct{ Below, Above float64 }

// Equal is "equal jitter": half the wait fixed, half random.
var Equal = Jitter{Below: 0.5}

// Spread is a jitter of ±f around the wait.
func Spread(f float64) Jitter { return Jitter{Below: f, Above: f} }

// Policy is when to retry. The base wait before retry n (from 1) is
// Steps[n-1] when Steps is set (a published schedule), else Min doubled
// n−1 times and capped at Max; Jitter then spreads it.
type Policy struct {
	// Steps, when set, are the base waits before retry 1, 2, …; past
	// the last there is no retry, unless RepeatLast keeps its wait.
	Steps      []time.Duration
	RepeatLast bool
	// Min and Max bound the doubling waits when Steps is empty (Max 0:
	// no bound).
	Min, Max time.Duration
	// Attempts, when above zero, is the most tries, the first included
	// (1: no retry).
	Attempts int
	// MaxWait, when above zero, is the longest wait worth making: a
	// retry that would need longer is not made (a caller elsewhere
	// retries later).
	MaxWait time.Duration
	Jitter  Jitter
	// Rand returns values in [0,1); nil takes math/rand's.
	Rand func() float64
}

// Delay is the wait before retry n (n=1 follows the first failed try);
// false when the policy makes no retry n.
func (p Policy) Delay(n int) (time.Duration, bool) { return p.delay(n, 1) }

func (p Policy) delay(n int, scale float64) (time.Duration, bool) {
	if n < 1 || (p.Attempts > 0 && n >= p.Attempts) {
		return 0, false
	}
	var d time.Duration
	switch {
	case len(p.Steps) > 0 && n <= len(p.Steps):
		d = p.Steps[n-1]
	case len(p.Steps) > 0 && p.RepeatLast:
		d = p.Steps[len(p.Steps)-1]
	case len(p.Steps) > 0:
		return 0, false
	default:
		d = time.Duration(float64(p.Min) * max(scale, 1))
		for i := 1; i < n && (p.Max <= 0 || d < p.Max) && d < math.MaxInt64/2; i++ {
			d *= 2
		}
		if p.Max > 0 {
			d = min(d, p.Max)
		}
	}
	return p.jitter(d), true
}

func (p Policy) jitter(d time.Duration) time.Duration {
	if p.Jitter == (Jitter{}) {
		return d
	}
	rnd := p.Rand
	if rnd == nil {
		rnd = rand.Float64
	}
	r := rnd()
	// Clamp, so that a misbehaving source cannot push a wait out of bounds.
	if r < 0 || math.IsNaN(r) {
		r = 0
	} else if r > 1 {
		r = 1
	}
	return time.Duration(float64(d) * (1 - p.Jitter.Below + (p.Jitter.Below+p.Jitter.Above)*r))
}

// Verdict is what one try says of the next.
type Verdict struct {
	// Again asks for a retry; false ends the loop (success, or a
	// failure no retry mends).
	Again bool
	// AtLeast is a wait the other side asked for (Retry-After): the
	// retry waits for it when it is longer than the policy's.
	AtLeast time.Duration
	// Scale multiplies Min for this wait (a rate limit backs off
	// harder); 0 or 1 leaves it.
	Scale float64
}

// Loop retries one operation under a policy.
type Loop struct {
	Policy Policy
	// Sleep waits d or until ctx ends (its error); nil takes a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Budget is the time a try needs to be useful: no retry is made when
	// ctx's deadline leaves less than the wait plus Budget.
	Budget time.Duration
}

// Run calls try with 1, 2, … until it asks for no retry or the policy,
// MaxWait or ctx allows none; it returns the number of retries made.
func (l Loop) Run(ctx context.Context, try func(attempt int) Verdict) (retries int) {
	for attempt := 1; ; attempt++ {
		v := try(attempt)
		if !v.Again || ctx.Err() != nil {
			return retries
		}
		wait, ok := l.Policy.delay(attempt, v.Scale)
		if !ok {
			return retries
		}
		wait = max(wait, v.AtLeast)
		if l.Policy.MaxWait > 0 && wait > l.Policy.MaxWait {
			return retries
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait+l.Budget {
			return retries // no time left for a useful try: a caller retries later
		}
		sleep := l.Sleep
		if sleep == nil {
			sleep = Sleep
		}
		if sleep(ctx, wait) != nil {
			return retries
		}
		retries++
	}
}

// Sleep waits d, or until ctx ends (its error).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
