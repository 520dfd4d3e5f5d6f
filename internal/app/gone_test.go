package app

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// A 410 Gone stops every event still queued for that receiver, not only
// the one that got it.
func TestGoneStopsTheReceiversQueue(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{retrySchedule: "50ms,10m"})
		ctx := context.Background()
		e.hooks.set(func(r *receiver) { r.status = http.StatusServiceUnavailable })
		var queued []string
		for i := 0; i < 3; i++ {
			r := send(t, e, e.testKey, map[string]any{"to": "5511999990001", "message": "x", "type": "SMS", "callbackUrl": e.hooks.url()})
			queued = append(queued, r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string))
		}
		// Each is tried twice (503, 503) and then waits ten minutes. A
		// message's one event is written when it is handed over, a moment
		// after its send was answered.
		eventOf := func(mid string) domain.Event {
			evs, err := e.st.EventsForMessage(ctx, e.account.ID, mid)
			if err != nil || len(evs) > 1 {
				t.Fatalf("events of %s: %v %v", mid, evs, err)
			}
			if len(evs) == 0 {
				return domain.Event{}
			}
			return evs[0]
		}
		polltest.For(t, "two attempts each", 10*time.Second, func() bool {
			for _, mid := range queued {
				if ev := eventOf(mid); ev.Attempts < 2 {
					return false
				}
			}
			return true
		})
		e.hooks.set(func(r *receiver) { r.status = http.StatusGone })
		r := send(t, e, e.testKey, map[string]any{"to": "5511999990001", "message": "x", "type": "SMS", "callbackUrl": e.hooks.url()})
		gone := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		polltest.For(t, "the queue stopped", 10*time.Second, func() bool {
			for _, mid := range append(queued, gone) {
				if eventOf(mid).State != domain.EventGone {
					return false
				}
			}
			return true
		})
		for _, mid := range queued {
			if ev := eventOf(mid); ev.Attempts != 2 {
				t.Errorf("event of %s: %d attempts; it should have been stopped without another", mid, ev.Attempts)
			}
		}
	})
}
