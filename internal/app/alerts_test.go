package app

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/nodetest"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// alertHooks are the account alerts the receiver got, in order.
func (e *env) alertHooks() []hook {
	var out []hook
	for _, h := range e.hooks.all() {
		if ev, _ := h.payload["event"].(string); strings.Contains(ev, ".") {
			out = append(out, h)
		}
	}
	return out
}

// alertCounts counts the account's alert events as stored, by name.
func (e *env) alertCounts(t *testing.T, accountID string) map[string]int {
	t.Helper()
	evs, err := e.st.AlertEvents(context.Background(), accountID, 100)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, ev := range evs {
		out[ev.Event]++
	}
	return out
}

func (e *env) sendLive(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		r := send(t, e, e.liveKey, map[string]any{"to": fmt.Sprintf("55119999%05d", 100+i), "message": "hi", "type": "SMS"})
		if r.status != 202 {
			t.Fatalf("send: %d %s", r.status, r.body)
		}
	}
}

// balance.low goes out once per crossing (again only after the balance was
// back at or above the threshold), spend.daily once per UTC day; both to
// the account webhook, signed and redeliverable; another account can
// neither read nor set them, and never sets them off.
func TestAlertsOncePerCrossing(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{credits: 10})
		owner := e.member("owner")
		if r := e.mg("PUT", "/api/v1/manage/account-webhook", owner, map[string]any{"url": e.hooks.url()}); r.status != 200 ||
			r.json(t)["url"] != e.hooks.url() {
			t.Fatalf("account webhook: %d %s", r.status, r.body)
		}
		if r := e.mg("PUT", "/api/v1/manage/alerts", owner, map[string]any{"lowBalance": 5, "dailySpend": 3}); r.status != 200 ||
			strings.TrimSpace(string(r.body)) != `{"lowBalance":5,"dailySpend":3}` {
			t.Fatalf("alerts: %d %s", r.status, r.body)
		}
		viewer := e.member("viewer")
		if r := e.mg("GET", "/api/v1/manage/account-webhook", viewer, nil); r.status != 200 || r.json(t)["url"] != e.hooks.url() {
			t.Fatalf("read the account webhook: %d %s", r.status, r.body)
		}
		wantProblem(t, "a viewer sets the webhook", e.mg("PUT", "/api/v1/manage/account-webhook", viewer,
			map[string]any{"url": ""}), 403, "FORBIDDEN")
		if r := e.mg("GET", "/api/v1/manage/alerts", viewer, nil); strings.TrimSpace(string(r.body)) != `{"lowBalance":5,"dailySpend":3}` {
			t.Fatalf("read alerts: %d %s", r.status, r.body)
		}
		wantProblem(t, "a developer sets alerts", e.mg("PUT", "/api/v1/manage/alerts", e.member("developer"),
			map[string]any{"lowBalance": 1}), 403, "FORBIDDEN")
		r := e.mg("PUT", "/api/v1/manage/alerts", owner, map[string]any{"lowBalance": -1, "dailySpend": 0.0000001})
		wantProblem(t, "bad thresholds", r, 400, "VALIDATION_ERROR")
		if !strings.Contains(string(r.body), `"lowBalance"`) || !strings.Contains(string(r.body), `"dailySpend"`) {
			t.Errorf("bad thresholds: %s", r.body)
		}
		wantProblem(t, "an http webhook elsewhere", e.mg("PUT", "/api/v1/manage/account-webhook", owner,
			map[string]any{"url": "ftp://example.com/x"}), 400, "VALIDATION_ERROR")

		e.sendLive(t, 3) // 10 → 7: the day's charges reach 3
		polltest.For(t, "spend.daily", 10*time.Second, func() bool { return len(e.alertHooks()) == 1 })
		e.sendLive(t, 3) // → 4: below 5
		polltest.For(t, "balance.low", 10*time.Second, func() bool { return len(e.alertHooks()) == 2 })
		e.sendLive(t, 1) // → 3: still below, nothing new
		if got := e.alertCounts(t, e.account.ID); got["balance.low"] != 1 || got["spend.daily"] != 1 {
			t.Fatalf("alerts stored: %v", got)
		}
		hooks := e.alertHooks()
		for i, want := range []map[string]any{
			{"event": "spend.daily", "accountId": e.account.ID, "balance": 7.0, "threshold": 3.0, "currency": "USD"},
			{"event": "balance.low", "accountId": e.account.ID, "balance": 4.0, "threshold": 5.0, "currency": "USD"},
		} {
			for k, v := range want {
				if hooks[i].payload[k] != v {
					t.Errorf("alert %d: %s = %v, want %v (%s)", i, k, hooks[i].payload[k], v, hooks[i].raw)
				}
			}
			if ts, _ := hooks[i].payload["timestamp"].(string); !strings.HasSuffix(ts, "Z") || len(hooks[i].payload) != 6 {
				t.Errorf("alert %d: %s", i, hooks[i].raw)
			}
		}

		// Back at the threshold re-arms it; the next crossing is posted.
		op := e.member("operator")
		if r := e.mg("POST", "/api/v1/manage/topups?account="+e.account.ID, op, map[string]any{"amount": 2, "note": "t"}); r.status != 200 {
			t.Fatalf("top-up: %d %s", r.status, r.body)
		}
		e.sendLive(t, 1) // 5 → 4
		polltest.For(t, "the second balance.low", 10*time.Second, func() bool { return len(e.alertHooks()) == 3 })
		if got := e.alertCounts(t, e.account.ID); got["balance.low"] != 2 || got["spend.daily"] != 1 {
			t.Fatalf("alerts stored: %v", got)
		}

		// Redelivered with the same webhook-id, like any webhook.
		first := e.alertHooks()[0]
		if r := e.mg("POST", "/api/v1/manage/events/"+first.id+"/redeliver", owner, nil); r.status != 202 {
			t.Fatalf("redeliver: %d %s", r.status, r.body)
		}
		polltest.For(t, "the redelivery", 10*time.Second, func() bool {
			hs := e.alertHooks()
			return len(hs) == 4 && hs[3].id == first.id && string(hs[3].raw) == string(first.raw)
		})
		// Alerts are not in the events feed of messages and replies.
		if r := e.do("GET", "/api/v1/integration/events?limit=1000", e.liveKey, nil); strings.Contains(string(r.body), "balance.low") ||
			strings.Contains(string(r.body), "spend.daily") {
			t.Errorf("feed: %s", r.body)
		}

		// Another account: its users cannot reach these settings, and its
		// sends below its own (unset) thresholds raise nothing here.
		other, err := CreateAccount(context.Background(), e.st, NewAccount{Name: "Other", Tier: "enterprise", Credits: 2,
			Currency: "USD", Country: "55"}, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		email := "owner-other@other.example"
		if _, _, err := createTestUser(context.Background(), e.st, other.ID, email, "owner", testPassword, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		theirs := e.login(email, testPassword)
		for _, p := range []struct {
			method, path string
			body         any
		}{{"GET", "/api/v1/manage/alerts", nil}, {"PUT", "/api/v1/manage/alerts", map[string]any{"lowBalance": 1000}},
			{"GET", "/api/v1/manage/account-webhook", nil}, {"PUT", "/api/v1/manage/account-webhook", map[string]any{"url": ""}}} {
			wantProblem(t, "another account's "+p.path, e.mg(p.method, p.path+"?account="+e.account.ID, theirs, p.body), 403, "FORBIDDEN")
		}
		if r := e.mg("GET", "/api/v1/manage/alerts", theirs, nil); strings.TrimSpace(string(r.body)) != `{"lowBalance":null,"dailySpend":null}` {
			t.Errorf("their alerts: %s", r.body)
		}
		olk, _ := e.addKey(other.ID, "live")
		if r := send(t, e, olk.Secret, map[string]any{"to": "5511999990100", "message": "hi", "type": "SMS"}); r.status != 202 {
			t.Fatalf("their send: %d %s", r.status, r.body)
		}
		if got := e.alertCounts(t, e.account.ID); got["balance.low"] != 2 || len(e.alertCounts(t, other.ID)) != 0 {
			t.Errorf("alerts after the other account's send: %v", got)
		}
		// Removing the account webhook keeps the alerts, unposted.
		if r := e.mg("PUT", "/api/v1/manage/account-webhook", owner, map[string]any{"url": ""}); r.status != 200 ||
			strings.TrimSpace(string(r.body)) != `{"url":""}` {
			t.Fatalf("remove the webhook: %d %s", r.status, r.body)
		}
	})
}

// Sends on two nodes at once cross each threshold once: each crossing is
// one alert, however the debits interleave. On a low balance the nodes'
// writers run their shares dry and refill them from the account row at
// once, which once broke the balance's CHECK and answered 500.
func TestAlertsAcrossNodes(t *testing.T) {
	for _, c := range []struct {
		name                string
		credits, low, after float64
	}{
		{"shares never run dry", 1000, 950, 920},
		{"shares run dry", 100, 50, 20},
	} {
		t.Run(c.name, func(t *testing.T) { alertsAcrossNodes(t, c.credits, c.low, c.after) })
	}
}

func alertsAcrossNodes(t *testing.T, credits, low, after float64) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{credits: credits, log: alertLog(t)})
		owner := e.member("owner")
		e.mg("PUT", "/api/v1/manage/account-webhook", owner, map[string]any{"url": e.hooks.url()})
		if r := e.mg("PUT", "/api/v1/manage/alerts", owner, map[string]any{"lowBalance": low, "dailySpend": 30}); r.status != 200 {
			t.Fatalf("alerts: %d %s", r.status, r.body)
		}
		nodes := []*env{e, e.secondNode()}
		var wg sync.WaitGroup
		for i, n := range nodes {
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := range 10 {
						r := n.do("POST", "/api/v1/integration/messages", n.liveKey, map[string]any{
							"to": fmt.Sprintf("5511998%02d%04d", i*4+w, 100+j), "message": "hi", "type": "SMS"})
						if r.status != 202 {
							t.Errorf("send: %d %s", r.status, r.body)
						}
					}
				}()
			}
		}
		wg.Wait()
		if got := e.alertCounts(t, e.account.ID); got["balance.low"] != 1 || got["spend.daily"] != 1 {
			t.Fatalf("alerts stored: %v", got)
		}
		polltest.For(t, "both alerts", 10*time.Second, func() bool { return len(e.alertHooks()) == 2 })
		a, err := e.st.Account(context.Background(), e.account.ID)
		if err != nil || a.Balance != int64(after*1_000_000) {
			t.Fatalf("balance %d, %v", a.Balance, err)
		}
		var sawLow bool
		for _, h := range e.alertHooks() {
			if h.payload["event"] == domain.EventBalanceLow {
				sawLow = true
				if b, _ := h.payload["balance"].(float64); b >= low {
					t.Errorf("balance.low at %v", b)
				}
			}
		}
		if !sawLow {
			t.Error("no balance.low")
		}
	})
}

func alertLog(t *testing.T) *nodetest.Buffer {
	b := &nodetest.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			for _, l := range strings.Split(b.String(), "\n") {
				if strings.Contains(l, "level=ERROR") || strings.Contains(l, "level=WARN") {
					t.Log(l)
				}
			}
		}
	})
	return b
}

// The overview and the alerts page show an account to its own users
// only: another account's user naming it sees their own account (the
// panel takes ?account= from operators alone), and an operator opens it
// by name.
func TestOverviewTenants(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	ctx := context.Background()
	e.sendLive(t, 2)
	other, err := CreateAccount(ctx, e.st, NewAccount{Name: "Other", Tier: "enterprise", Credits: 5, Currency: "USD", Country: "55"},
		e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	email := "owner@other.example"
	if _, _, err := createTestUser(ctx, e.st, other.ID, email, "owner", testPassword, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.login(email)
	for _, path := range []string{"/?account=" + e.account.ID, "/settings/alerts?account=" + e.account.ID} {
		if p := b.get(path); p.status != 200 || strings.Contains(p.body, "Acme") || strings.Contains(p.body, e.account.ID) ||
			!strings.Contains(p.body, "Other") {
			t.Errorf("another account's user on %s: %d", path, p.status)
		}
	}
	if p := b.get("/"); p.status != 200 || !strings.Contains(p.body, "Other") || strings.Contains(p.body, "Acme") ||
		!strings.Contains(p.body, "Nothing sent today.") {
		t.Errorf("their own overview: %d", p.status)
	}
	op := e.browser()
	op.login(e.user("operator"))
	if p := op.get("/?account=" + e.account.ID); p.status != 200 || !strings.Contains(p.body, "Operator view of <strong>Acme</strong>") {
		t.Errorf("an operator opens the account's overview: %d", p.status)
	}
}

// A low balance that no debit announced (here: a threshold set above the
// balance) is announced by the sweeper, once.
func TestLowBalanceAnnouncedBySweeper(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{credits: 10})
		owner := e.member("owner")
		e.mg("PUT", "/api/v1/manage/account-webhook", owner, map[string]any{"url": e.hooks.url()})
		e.sendLive(t, 6) // 10 → 4, no alert set
		if r := e.mg("PUT", "/api/v1/manage/alerts", owner, map[string]any{"lowBalance": 5}); r.status != 200 {
			t.Fatalf("alerts: %d %s", r.status, r.body)
		}
		e.clock.Advance(31 * time.Second)
		polltest.For(t, "the sweeper's balance.low", 10*time.Second, func() bool { return len(e.alertHooks()) == 1 })
		h := e.alertHooks()[0]
		if h.payload["event"] != "balance.low" || h.payload["balance"] != 4.0 || h.payload["threshold"] != 5.0 {
			t.Errorf("alert: %s", h.raw)
		}
		if left, err := e.st.UnmarkedLowBalances(context.Background(), 10); err != nil || len(left) != 0 {
			t.Errorf("still unannounced after the alert: %d %v", len(left), err)
		}
		if got := e.alertCounts(t, e.account.ID); got["balance.low"] != 1 {
			t.Errorf("alerts stored: %v", got)
		}
	})
}
