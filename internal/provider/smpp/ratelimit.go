package smpp

import (
	"context"
	"sync"
	"time"
)

// bucket spaces submit_sm PDUs at least 1/TPS apart: a token bucket of one
// token, refilled at TPS per second. A burst of one rather than a second's
// worth, because SMSCs count per second in windows of their own: a full
// bucket spent at the end of one of their seconds and refilled at the start
// of the next would look like twice the TPS and earn ESME_RTHROTTLED.
//
// Each caller reserves the next free instant and waits for it, so waiters
// are served in arrival order without a queue.
type bucket struct {
	clock    Clock
	interval time.Duration

	mu   sync.Mutex
	next time.Time // when the next token may be taken
}

// newBucket returns nil (no limit) for tps <= 0.
func newBucket(tps float64, clock Clock) *bucket {
	if tps <= 0 {
		return nil
	}
	return &bucket{clock: clock, interval: time.Duration(float64(time.Second) / tps)}
}

// take waits for a token. If ctx or stop ends first, the reservation is
// handed back when no later one was made, so a cancelled wait does not
// delay the others.
func (b *bucket) take(ctx context.Context, stop <-chan struct{}) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	now := b.clock.Now()
	at := b.next
	if at.Before(now) {
		at = now
	}
	b.next = at.Add(b.interval)
	b.mu.Unlock()
	d := at.Sub(now)
	if d <= 0 {
		return nil
	}
	select {
	case <-b.clock.After(d):
		return nil
	case <-ctx.Done():
		b.giveBack(at)
		return ctx.Err()
	case <-stop:
		b.giveBack(at)
		return errNotSent
	}
}

func (b *bucket) giveBack(at time.Time) {
	b.mu.Lock()
	if b.next.Equal(at.Add(b.interval)) {
		b.next = at
	}
	b.mu.Unlock()
}
