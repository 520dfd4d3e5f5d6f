package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/nodetest"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// downReceiver is an integrator's endpoint that may be down: while it is,
// every connection is closed without an answer, as a dead host behind a
// load balancer does. It records every request it sees, with the node's
// clock.
type downReceiver struct {
	url  string
	down atomic.Bool

	mu   sync.Mutex
	hits []downHit
}

type downHit struct {
	webhookID string
	at        time.Time // the node's clock when it arrived
	timestamp int64     // its webhook-timestamp
	signed    bool      // the signature verifies (Standard Webhooks library)
	answered  bool
}

func newDownReceiver(t *testing.T, e *env) *downReceiver {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(e.account.WebhookSecret)
	if err != nil {
		t.Fatal(err)
	}
	r := &downReceiver{}
	r.down.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		h := downHit{webhookID: req.Header.Get("webhook-id"), at: e.clock.Now(), answered: !r.down.Load(),
			// The node's clock is days ahead of the library's: the
			// timestamp is checked against the node's below.
			signed: wh.VerifyIgnoringTimestamp(body, req.Header) == nil}
		h.timestamp, _ = strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
		r.mu.Lock()
		r.hits = append(r.hits, h)
		r.mu.Unlock()
		if !h.answered {
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/hooks"
	return r
}

func (r *downReceiver) snapshot() []downHit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]downHit(nil), r.hits...)
}

// A receiver down for days (the clock is pushed through the contract's
// 72-hour retry schedule): its event is tried again on schedule, each
// failed attempt recorded, and delivered, under its one webhook-id, at the
// first attempt after it comes back; a receiver that never comes back gets
// every attempt of the schedule, after which its event is failed and an
// ERROR is logged.
func TestReceiverDownForDays(t *testing.T) {
	sched := webhook.DefaultSchedule()
	var items []string
	for _, d := range sched {
		items = append(items, d.String())
	}
	// The returning receiver misses this many attempts: the eighth comes
	// 31 h 35 min after the first, the ninth 20 h later, so it is away for
	// more than two days.
	const missed = 8
	forEachDialect(t, func(t *testing.T, d string) {
		logs := &nodetest.Buffer{}
		e := newEnv(t, d, envOptions{retrySchedule: strings.Join(items, ","), log: logs, poll: 20 * time.Millisecond})
		ctx := context.Background()
		returning, lost := newDownReceiver(t, e), newDownReceiver(t, e)
		f := []*followed{{name: "returning", rcv: returning, stopsAt: missed + 1}, {name: "lost", rcv: lost, stopsAt: len(sched) + 1}}
		for _, x := range f {
			// A number that fails at once: one event per send. The live key
			// also puts its debit and refund in the ledger.
			r := send(t, e, e.liveKey, map[string]any{"to": "5511999990001", "message": "x", "type": "SMS", "callbackUrl": x.rcv.url})
			x.mid = r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		}
		first := e.clock.Now()
		for n := 1; ; n++ {
			var next time.Time
			for _, x := range f {
				if x.done {
					continue
				}
				x.checkAttempt(t, e, n, sched)
				if x.ev.State == domain.EventPending && x.ev.NextAttemptAt.After(next) {
					next = x.ev.NextAttemptAt
				}
			}
			if n == missed {
				returning.down.Store(false)
			}
			if next.IsZero() {
				break
			}
			// Both events' next attempts are due at the later of the two.
			e.clock.Advance(next.Sub(e.clock.Now()) + time.Millisecond)
		}

		back := returning.snapshot()
		if away := back[len(back)-1].at.Sub(first); away < 48*time.Hour {
			t.Errorf("the returning receiver got its event %v after the first attempt, want more than two days", away)
		}
		gone := lost.snapshot()
		if span := gone[len(gone)-1].at.Sub(first); span < 68*time.Hour || span > 84*time.Hour {
			t.Errorf("the last attempt came %v after the first; the schedule spans 72 h (75 h 35 min ±10 %%)", span)
		}
		checkDowntimeLogs(t, logs.String(), f, len(sched))
		checkSettledAndBalanced(ctx, t, e, f)
		t.Logf("returning receiver: delivered at attempt %d, %v after the first; lost receiver: %d attempts over %v",
			len(back), back[len(back)-1].at.Sub(first).Round(time.Minute), len(gone), gone[len(gone)-1].at.Sub(first).Round(time.Minute))
	})
}

// followed is one event the downtime test follows attempt by attempt.
type followed struct {
	name    string
	rcv     *downReceiver
	stopsAt int // the attempt that ends it: delivered, or the schedule used up
	mid     string
	ev      domain.Event
	due     time.Time // when the attempt being waited for was scheduled
	done    bool
}

// checkAttempt waits until attempt n of the event is recorded and checks
// it: made no earlier than scheduled, recorded as what the receiver did,
// seen by the receiver under the event's id with a valid signature and the
// node's time, and the next one scheduled by the schedule (±10 % jitter).
func (x *followed) checkAttempt(t *testing.T, e *env, n int, sched webhook.Schedule) {
	t.Helper()
	ctx := context.Background()
	polltest.For(t, fmt.Sprintf("attempt %d to the %s receiver", n, x.name), 10*time.Second, func() bool {
		evs, err := e.st.EventsForMessage(ctx, e.account.ID, x.mid)
		if err != nil || len(evs) != 1 {
			return false
		}
		x.ev = evs[0]
		return x.ev.Attempts >= n
	})
	atts, err := e.st.Attempts(ctx, x.ev.ID)
	if err != nil || len(atts) != n || x.ev.Attempts != n {
		t.Fatalf("%s: attempt %d: event %+v, attempts recorded %+v (%v)", x.name, n, x.ev, atts, err)
	}
	a := atts[n-1]
	hits := x.rcv.snapshot()
	if len(hits) != n {
		t.Fatalf("%s: the receiver saw %d requests after attempt %d", x.name, len(hits), n)
	}
	h := hits[n-1]
	if h.webhookID != x.ev.ID || !h.signed || h.timestamp != a.AttemptedAt.Unix() {
		t.Errorf("%s: attempt %d arrived as %+v; want webhook-id %s, a valid signature and timestamp %d",
			x.name, n, h, x.ev.ID, a.AttemptedAt.Unix())
	}
	if a.AttemptedAt.Before(x.due) {
		t.Errorf("%s: attempt %d made at %v, before its time %v", x.name, n, a.AttemptedAt, x.due)
	}
	last := n == x.stopsAt
	switch {
	case h.answered && (!last || x.ev.State != domain.EventDelivered || a.StatusCode != http.StatusNoContent):
		t.Fatalf("%s: attempt %d was answered 204, recorded %d %q, event %s", x.name, n, a.StatusCode, a.Error, x.ev.State)
	case h.answered:
		x.done = true
		return
	case a.StatusCode != 0 || a.Error == "":
		t.Errorf("%s: attempt %d got no answer but is recorded as %d %q", x.name, n, a.StatusCode, a.Error)
	}
	if last {
		if x.ev.State != domain.EventFailed {
			t.Fatalf("%s: after attempt %d, the last of the schedule, the event is %s", x.name, n, x.ev.State)
		}
		x.done = true
		return
	}
	if x.ev.State != domain.EventPending {
		t.Fatalf("%s: after attempt %d the event is %s", x.name, n, x.ev.State)
	}
	// The next attempt is scheduled from the end of this one, and the
	// node's clock runs on with real time (pushed forward by the test), so
	// the attempt's own duration and a moment of slack for recording it
	// come on top of the schedule's ±10 %.
	gap, want := x.ev.NextAttemptAt.Sub(a.AttemptedAt), sched[n-1]
	if gap < want*9/10 || gap > want*11/10+a.Duration+250*time.Millisecond {
		t.Errorf("%s: attempt %d is followed by one %v later; the schedule says %v ±10 %%", x.name, n, gap, want)
	}
	x.due = x.ev.NextAttemptAt
}

// checkDowntimeLogs asserts what an operator reads: a WARN for each failed
// attempt that will be retried, and an ERROR when the schedule is used up.
func checkDowntimeLogs(t *testing.T, logs string, f []*followed, retries int) {
	t.Helper()
	for _, x := range f {
		warns, errs := 0, 0
		for _, line := range strings.Split(logs, "\n") {
			if !strings.Contains(line, "event="+x.ev.ID) {
				continue
			}
			switch {
			case strings.Contains(line, "level=WARN") && strings.Contains(line, "webhook delivery failed; retrying"):
				warns++
			case strings.Contains(line, "level=ERROR") && strings.Contains(line, "failed for good"):
				errs++
			}
		}
		wantWarns, wantErrs := x.stopsAt-1, 0
		if x.ev.State == domain.EventFailed {
			wantWarns, wantErrs = retries, 1
		}
		if warns != wantWarns || errs != wantErrs {
			t.Errorf("%s: %d WARN and %d ERROR lines for its event, want %d and %d", x.name, warns, errs, wantWarns, wantErrs)
		}
	}
}

// checkSettledAndBalanced asserts that the messages are final (FAILED at
// once, refunded) and that the balance is the ledger's sum and untouched.
func checkSettledAndBalanced(ctx context.Context, t *testing.T, e *env, f []*followed) {
	t.Helper()
	for _, x := range f {
		m, err := e.st.MessageByID(ctx, x.mid)
		if err != nil || m.Status != "FAILED" || m.Charged != 0 {
			t.Errorf("%s: message %+v (%v), want FAILED and refunded", x.name, m, err)
		}
	}
	a, err := e.st.Account(ctx, e.account.ID)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := e.st.LedgerSum(ctx, e.account.ID)
	if err != nil || a.Balance != sum || a.Balance != 1000_000000 {
		t.Errorf("balance %d, ledger sum %d (%v); want both 1000 credits", a.Balance, sum, err)
	}
}
