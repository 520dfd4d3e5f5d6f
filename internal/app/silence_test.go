package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider/smpp/smpptest"
)

// impatientSMPP is the configuration of an SMPP provider that gives up on
// a submit_sm after 300 ms and fails over after failures failed
// hand-overs.
func impatientSMPP(name, addr string, failures int) string {
	return fmt.Sprintf(`  - name: %s
    type: smpp
    smpp:
      addr: %s
      systemId: msgsvc
      password: secret
      timeout: 300ms
    breaker:
      failures: %d
      cooldown: 10m
`, name, addr, failures)
}

// silenceConfig routes Swedish numbers to a primary SMSC with a backup,
// and Norwegian ones to the primary alone. The primary gives up on a
// submit_sm after 300 ms and fails over after two failed hand-overs.
func silenceConfig(primary, backup string) string {
	return "providers:\n" + impatientSMPP("primary", primary, 2) + fmt.Sprintf(`  - name: backup
    type: smpp
    smpp:
      addr: %s
      systemId: msgsvc
      password: secret
routes:
  - channel: SMS
    countries: ["46"]
    primary: primary
    secondary: backup
  - channel: SMS
    countries: ["47"]
    primary: primary
`, backup)
}

// An SMSC that keeps its binds but stops answering: no message is lost.
// Messages with a backup route are retried, fail over to the backup once
// the primary's circuit breaker opens (and /readyz says so), and are
// delivered there once each; messages without one are retried on the
// dispatcher's schedule until their validity ends, then fail EXPIRED and
// are refunded. Every webhook is delivered and the ledger balances.
func TestProviderStopsAnswering(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		primary, backup := smpptest.Start(t), smpptest.Start(t)
		// A hand-over may take half a lease: 1 s for the primary's timeouts
		// and retries of one round.
		e := newEnv(t, d, envOptions{poll: 20 * time.Millisecond, lease: 2 * time.Second,
			file: silenceConfig(primary.Addr(), backup.Addr())})
		ctx := context.Background()
		polltest.For(t, "both SMSCs bound", 10*time.Second, func() bool { return primary.Binds() > 0 && backup.Binds() > 0 })

		// The primary works, then stops answering.
		r := send(t, e, e.liveKey, map[string]any{"to": "46700000009", "message": "before", "type": "SMS"})
		if m := finalStatus(t, e, e.liveKey, msgID(t, r, 0), "DELIVERED"); m["provider"] != "primary" {
			t.Fatalf("before the silence: %v", m)
		}
		primary.SetSilent(true)

		swedes := sendIDs(t, e, map[string]any{"recipients": []string{"46700000011", "46700000021", "46700000031"},
			"message": "with a backup", "type": "SMS", "callbackUrl": e.hooks.url()})
		norwegians := sendIDs(t, e, map[string]any{"recipients": []string{"4791000011", "4791000021"},
			"message": "primary only", "type": "SMS", "validity": 900, "callbackUrl": e.hooks.url()})
		all := append(slices.Clone(swedes), norwegians...)

		rounds, sawFailover := driveRetries(t, e, all, func() bool {
			if !allStatus(t, e, swedes, domain.Delivered) {
				return false
			}
			ready := e.do("GET", "/readyz", "", nil).json(t)
			if p := fmt.Sprint(ready["provider:primary"]); !strings.HasPrefix(p, "failing over") {
				t.Errorf("/readyz while the primary is silent: provider:primary = %q", p)
			}
			if b := fmt.Sprint(ready["provider:backup"]); !strings.HasPrefix(b, "ok") {
				t.Errorf("/readyz: provider:backup = %q", b)
			}
			return true
		})
		if !sawFailover {
			t.Error("the messages with a backup were not delivered while the primary's breaker was open")
		}
		for _, mid := range swedes {
			checkEnded(ctx, t, e, mid, domain.Delivered, "", "backup", []string{"SENT", "DELIVERED"})
		}
		for _, mid := range norwegians {
			checkEnded(ctx, t, e, mid, domain.Failed, domain.CodeExpired, "", []string{"FAILED"})
		}
		a, err := e.st.Account(ctx, e.account.ID)
		if err != nil {
			t.Fatal(err)
		}
		if sum, err := e.st.LedgerSum(ctx, e.account.ID); err != nil || sum != a.Balance {
			t.Errorf("balance %d, ledger sum %d (%v)", a.Balance, sum, err)
		}
		if got := backup.Submits(); len(got) != len(swedes) {
			t.Errorf("the backup got %d submit_sm (%v), want one per message with a backup (%d)", len(got), got, len(swedes))
		}
		silent := primary.Submits()[1:]
		for _, to := range []string{"46700000011", "4791000011"} {
			if !slices.Contains(silent, to) {
				t.Errorf("the silent primary never got %s", to)
			}
		}
		t.Logf("%d rounds of retries; the silent primary got %d submit_sm it never answered (for %d messages; "+
			"a carrier that only lost its answers could deliver those again), the backup %d", rounds, len(silent), len(all), backup.Answered())
	})
}

// msgID is the id of the i-th message of a 202 answer.
func msgID(t *testing.T, r response, i int) string {
	t.Helper()
	if r.status != 202 {
		t.Fatalf("send: %d %s", r.status, r.body)
	}
	return r.json(t)["messages"].([]any)[i].(map[string]any)["messageId"].(string)
}

// sendIDs sends with the live key and returns the messages' ids.
func sendIDs(t *testing.T, e *env, body map[string]any) []string {
	t.Helper()
	r := send(t, e, e.liveKey, body)
	var ids []string
	for i := range r.json(t)["messages"].([]any) {
		ids = append(ids, msgID(t, r, i))
	}
	return ids
}

// driveRetries moves the clock from one round of hand-overs to the next
// until every message is final: it waits until no message is claimed and
// every one still SENDING has its retry scheduled, then makes the earliest
// retry due. check runs after each round; once it returns true it is not
// run again. It returns the rounds and whether check returned true.
func driveRetries(t *testing.T, e *env, ids []string, check func() bool) (rounds int, checked bool) {
	t.Helper()
	ctx := context.Background()
	for rounds = 1; rounds <= 20; rounds++ {
		var next time.Time
		final := 0
		var seen []string
		recorded := func() bool {
			next, final, seen = time.Time{}, 0, nil
			now := e.clock.Now()
			for _, id := range ids {
				m, err := e.st.MessageByID(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				seen = append(seen, fmt.Sprintf("%s %s attempts %d lease %q next in %v", m.To, m.Status, m.Attempts, m.LeaseOwner,
					m.NextAttemptAt.Sub(now)))
				switch {
				case m.Status.Final():
					final++
				case m.Status != domain.Sending:
					return false // SENT: its receipt is on the way
				case m.LeaseOwner != "" || !m.NextAttemptAt.After(now):
					return false // being handed over, or due
				case next.IsZero() || m.NextAttemptAt.Before(next):
					next = m.NextAttemptAt
				}
			}
			return true
		}
		for deadline := time.Now().Add(20 * time.Second); !recorded(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d of hand-overs not recorded within 20 s: %s", rounds, strings.Join(seen, "; "))
			}
		}
		if !checked {
			checked = check()
		}
		if final == len(ids) {
			return rounds, checked
		}
		e.clock.Advance(next.Sub(e.clock.Now()) + time.Millisecond)
	}
	t.Fatalf("messages still not final after %d rounds", rounds)
	return rounds, checked
}

// allStatus reports whether every message has status s.
func allStatus(t *testing.T, e *env, ids []string, s domain.Status) bool {
	t.Helper()
	for _, id := range ids {
		m, err := e.st.MessageByID(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != s {
			return false
		}
	}
	return true
}

// checkEnded asserts a message's end: its status, error code, provider
// (when given), what it is charged (its price, or nothing when no
// provider took it) and its webhooks, each delivered.
func checkEnded(ctx context.Context, t *testing.T, e *env, mid string, status domain.Status, code, provider string, hooks []string) {
	t.Helper()
	m, err := e.st.MessageByID(ctx, mid)
	if err != nil {
		t.Fatal(err)
	}
	charged := m.Credits
	if status == domain.Failed {
		charged = 0
	}
	if m.Status != status || m.ErrorCode != code || (provider != "" && m.Provider != provider) || m.Charged != charged {
		t.Errorf("%s to %s: %s %q via %q, charged %d of %d; want %s %q via %q, charged %d",
			mid, m.To, m.Status, m.ErrorCode, m.Provider, m.Charged, m.Credits, status, code, provider, charged)
	}
	var evs []domain.Event
	delivered := func() bool {
		if evs, err = e.st.EventsForMessage(ctx, e.account.ID, mid); err != nil || len(evs) != len(hooks) {
			return false
		}
		for _, ev := range evs {
			if ev.State != domain.EventDelivered {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(10 * time.Second); !delivered(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: events %+v (%v), want %v, each delivered", mid, evs, err, hooks)
		}
	}
	if got := sortedByRank(e.hooks.forMessage(mid)); !slices.Equal(got, hooks) {
		t.Errorf("%s: webhooks %v, want %v", mid, got, hooks)
	}
}
