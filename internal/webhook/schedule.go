package webhook

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/backoff"
)

// Schedule holds the waits between delivery attempts: element i is the
// delay before retry i+1.
type Schedule []time.Duration

// jitterFraction spreads retries ±10% so that a receiver's outage does
// not turn into synchronised retry bursts when it recovers.
const jitterFraction = 0.10

// DefaultSchedule returns the contract's retry schedule, which together
// with jitter spans the 72-hour validity of a message.
func DefaultSchedule() Schedule {
	return Schedule{
		5 * time.Second,
		5 * time.Minute,
		30 * time.Minute,
		2 * time.Hour,
		5 * time.Hour,
		10 * time.Hour,
		14 * time.Hour,
		20 * time.Hour,
		24 * time.Hour,
	}
}

// ParseSchedule parses a comma-separated list of Go durations such as
// "1s,2s,4s" (MSGSVC_WEBHOOK_RETRY_SCHEDULE). Spaces around items are
// ignored; empty items and non-positive durations are errors.
func ParseSchedule(s string) (Schedule, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("webhook: empty retry schedule")
	}
	items := strings.Split(s, ",")
	out := make(Schedule, 0, len(items))
	for i, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("webhook: retry schedule item %d is empty", i+1)
		}
		d, err := time.ParseDuration(item)
		if err != nil {
			return nil, fmt.Errorf("webhook: retry schedule item %d: %w", i+1, err)
		}
		if d <= 0 {
			return nil, fmt.Errorf("webhook: retry schedule item %d (%s) must be positive", i+1, item)
		}
		out = append(out, d)
	}
	return out, nil
}

// Delay returns how long to wait before retry n (n=1 follows the first
// failed attempt), jittered uniformly by ±10% using rnd, which must return
// values in [0,1); nil rnd uses math/rand. It returns false when n is
// beyond the schedule (or below 1), meaning no more retries.
func (s Schedule) Delay(n int, rnd func() float64) (time.Duration, bool) {
	if len(s) == 0 {
		return 0, false
	}
	return backoff.Policy{Steps: s, Jitter: backoff.Spread(jitterFraction), Rand: rnd}.Delay(n)
}
