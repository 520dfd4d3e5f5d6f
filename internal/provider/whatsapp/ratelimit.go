package whatsapp

import (
	"context"
	"sync"
	"time"
)

// bucket spaces requests at least 1/rate apart, a burst of one: the
// platform measures throughput per second and answers 130429 beyond it,
// so an even pace is what keeps us under it. Each caller reserves the
// next free instant and waits for it, so waiters go in arrival order.
type bucket struct {
	now      func() time.Time
	sleep    func(ctx context.Context, d time.Duration) error
	interval time.Duration

	mu   sync.Mutex
	next time.Time
}

func newBucket(rate float64, now func() time.Time, sleep func(context.Context, time.Duration) error) *bucket {
	if rate <= 0 {
		return nil
	}
	return &bucket{now: now, sleep: sleep, interval: time.Duration(float64(time.Second) / rate)}
}

// take waits for the next slot. A wait cut short by ctx hands its slot
// back when no later one was reserved, so it delays nobody.
func (b *bucket) take(ctx context.Context) error {
	if b == nil {
		return ctx.Err()
	}
	b.mu.Lock()
	now := b.now()
	at := b.next
	if at.Before(now) {
		at = now
	}
	b.next = at.Add(b.interval)
	b.mu.Unlock()
	if err := b.sleep(ctx, at.Sub(now)); err != nil {
		b.mu.Lock()
		if b.next.Equal(at.Add(b.interval)) {
			b.next = at
		}
		b.mu.Unlock()
		return err
	}
	return nil
}
