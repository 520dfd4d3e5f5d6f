package app

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// statusRank orders a message's statuses as it reaches them.
var statusRank = map[string]int{"SENT": 1, "DELIVERED": 2, "READ": 3, "FAILED": 2}

// inStatusOrder reports whether statuses, as a receiver recorded them,
// come in the order a message reaches them.
func inStatusOrder(statuses []string) bool {
	for i := 1; i < len(statuses); i++ {
		if statusRank[statuses[i]] <= statusRank[statuses[i-1]] {
			return false
		}
	}
	return true
}

// A message's webhooks are posted one after the other: its DELIVERED is not
// posted before its SENT was answered, though the simulator reports them
// about a millisecond apart and the receiver answers each after its own
// random delay. 200 messages, every one's events recorded in status order.
func TestWebhooksOfAMessageArriveInOrder(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		e.hooks.set(func(r *receiver) {
			r.delay = func() time.Duration { return time.Duration(rand.IntN(4000)) * time.Microsecond }
		})
		const n = 200
		ids := sendToMany(t, e, n, 11000, "order")
		waitBothHooks(t, e, "every message's DELIVERED webhook", 60*time.Second, ids)
		checkHooksInOrder(t, e, ids)
	})
}

// A slow receiver: each message's DELIVERED is written while its SENT is
// still being posted, so it waits in the table behind it. The idle poll is
// an hour away: only the worker's looking in the table once SENT's outcome
// is recorded brings DELIVERED, and it comes within seconds, in order.
func TestWebhookWaitingBehindAnotherComesOnItsOutcome(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{poll: time.Hour})
		e.hooks.set(func(r *receiver) { r.delay = func() time.Duration { return 150 * time.Millisecond } })
		const n = 20
		ids := sendToMany(t, e, n, 13000, "waiting")
		waitBothHooks(t, e, "every message's DELIVERED webhook", 30*time.Second, ids)
		checkHooksInOrder(t, e, ids)
	})
}

// A receiver down for a while: each event's first attempt and first retry
// fail and the next retry is an hour away. Once the receiver is back, the
// first event it answers brings its whole backlog forward: every waiting
// event arrives within seconds, each message's in status order.
func TestWebhookBacklogComesPromptlyInOrder(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{retrySchedule: "200ms,1h"})
		ctx := context.Background()
		e.hooks.set(func(r *receiver) { r.status = 500 })
		const n = 20
		ids := sendToMany(t, e, n, 12000, "backlog")
		polltest.For(t, "every event retried once and waiting an hour", 30*time.Second, func() bool {
			for _, id := range ids {
				evs, err := e.st.EventsForMessage(ctx, e.account.ID, id)
				if err != nil {
					t.Fatal(err)
				}
				if len(evs) < 2 {
					return false
				}
				for _, ev := range evs {
					if ev.State != domain.EventPending || ev.Attempts < 2 || ev.LeaseOwner != "" {
						return false
					}
				}
			}
			return true
		})
		if got := len(e.hooks.all()); got != 0 {
			t.Fatalf("%d webhooks recorded while the receiver was down", got)
		}
		// The receiver is back; a new message's event is the first it answers.
		e.hooks.set(func(r *receiver) { r.status = 0 })
		trigger := msgID(t, send(t, e, e.testKey, map[string]any{"to": "5511999912999", "message": "back", "type": "SMS",
			"callbackUrl": e.hooks.url()}), 0)
		waitBothHooks(t, e, "the backlog delivered", 15*time.Second, append(ids, trigger))
		checkHooksInOrder(t, e, ids)
	})
}

// waitBothHooks waits until the receiver has recorded the SENT and the
// DELIVERED webhook of every message of ids.
func waitBothHooks(t *testing.T, e *env, what string, within time.Duration, ids []string) {
	t.Helper()
	polltest.For(t, what, within, func() bool {
		for _, id := range ids {
			if len(e.hooks.forMessage(id)) < 2 {
				return false
			}
		}
		return true
	})
}

// checkHooksInOrder fails the test unless every message of ids had its
// webhooks recorded in status order, DELIVERED last.
func checkHooksInOrder(t *testing.T, e *env, ids []string) {
	t.Helper()
	bad := 0
	for _, id := range ids {
		if got := e.hooks.forMessage(id); !inStatusOrder(got) || got[len(got)-1] != "DELIVERED" {
			if bad++; bad <= 3 {
				t.Errorf("message %s: webhooks recorded as %v", id, got)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d messages' webhooks out of order", bad, len(ids))
	}
}

// sendToMany sends one test campaign to n numbers, numbered from first,
// with its webhooks to the env's receiver, and returns its message ids.
func sendToMany(t *testing.T, e *env, n, first int, text string) []string {
	t.Helper()
	recipients := make([]string, n)
	for i := range recipients {
		recipients[i] = fmt.Sprintf("55119999%05d", first+i)
	}
	r := send(t, e, e.testKey, map[string]any{"recipients": recipients, "message": text, "type": "SMS", "callbackUrl": e.hooks.url()})
	ids := make([]string, n)
	for i := range ids {
		ids[i] = msgID(t, r, i)
	}
	return ids
}
