package app

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider/smpp/smpptest"
)

// moneyConfig: three SMSCs. cheap costs little, dear a lot, third has no
// costs. Each route owns a range of Swedish mobile numbers.
const moneyConfig = `currency: USD
providers:
  - name: cheap
    type: smpp
    smpp: {addr: %q, systemId: msgsvc, password: secret}
    costs: {"46": 0.01}
  - name: dear
    type: smpp
    smpp: {addr: %q, systemId: msgsvc, password: secret}
    costs: %s
  - name: third
    type: smpp
    smpp: {addr: %q, systemId: msgsvc, password: secret, timeout: 300ms}
    breaker: {failures: 1, cooldown: 10m}
routes:
  - {name: cheapest, channel: SMS, prefixes: ["46700"], providers: [dear, cheap], strategy: least-cost}
  - {name: best, channel: SMS, prefixes: ["46701"], providers: [cheap, dear], strategy: quality, window: 20}
  - {name: split, channel: SMS, prefixes: ["46702"], providers: [dear, third], strategy: weighted, weights: {dear: 70, third: 30}}
  - {name: guarded, channel: SMS, prefixes: ["46703"], providers: [dear]}
  - {name: loss, channel: SMS, prefixes: ["46704"], providers: [dear], allowLoss: true}
  - {name: backed, channel: SMS, prefixes: ["46705"], primary: third, secondary: dear}
  - {name: uncosted, channel: SMS, prefixes: ["46706"], providers: [third], strategy: least-cost}
`

func startMoneyNode(t *testing.T, d string) (*env, map[string]*smpptest.SMSC) {
	t.Helper()
	smscs := map[string]*smpptest.SMSC{"cheap": smpptest.Start(t), "dear": smpptest.Start(t), "third": smpptest.Start(t)}
	f := newConfigFile(t, fmt.Sprintf(moneyConfig, smscs["cheap"].Addr(), smscs["dear"].Addr(), "dear.csv", smscs["third"].Addr()))
	f.beside("dear.csv", []byte("prefix,cost\n46,0.05\n46703,5\n46704,5\n"))
	// A hand-over to the silent SMSC gives up within half of the lease.
	e := newEnv(t, d, envOptions{poll: 20 * time.Millisecond, lease: 2 * time.Second, config: f.serve})
	polltest.For(t, "three SMSCs bound", 10*time.Second, func() bool {
		return smscs["cheap"].Binds() > 0 && smscs["dear"].Binds() > 0 && smscs["third"].Binds() > 0
	})
	return e, smscs
}

// ended waits for a message to reach a final status and returns it as
// stored.
func ended(t *testing.T, e *env, mid string) domain.Message {
	t.Helper()
	var m domain.Message
	polltest.For(t, mid+" final", 10*time.Second, func() bool {
		var err error
		if m, err = e.st.MessageByID(context.Background(), mid); err != nil {
			t.Fatal(err)
		}
		return m.Status.Final()
	})
	return m
}

func sendOne(t *testing.T, e *env, to string) domain.Message {
	t.Helper()
	return ended(t, e, msgID(t, send(t, e, e.liveKey, map[string]any{"to": to, "message": "hi", "type": "SMS"}), 0))
}

// Least cost, quality, weighted split, margin guard and failover, each
// against real SMPP peers; costs shown to operators only.
func TestRoutesKnowMoney(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e, smscs := startMoneyNode(t, d)
		ctx := context.Background()

		// Least cost: cheap, though listed second; the cost is recorded.
		m := sendOne(t, e, "46700000011")
		if m.Status != domain.Delivered || m.Provider != "cheap" || m.Route != "cheapest" || m.Cost != 10_000 || m.CostCurrency != "USD" {
			t.Fatalf("least-cost: %+v", m)
		}

		// Quality: cheap starts losing everything; after its failures show
		// in its delivered ratio, the route moves to dear.
		smscs["cheap"].SetUndeliverable(true)
		var providers []string
		for i := range 4 {
			m := sendOne(t, e, fmt.Sprintf("4670100001%d", i))
			providers = append(providers, m.Provider)
		}
		if got := strings.Join(providers, ","); got != "cheap,dear,dear,dear" {
			t.Fatalf("quality: providers %s, want the failing cheap once, then dear", got)
		}

		// Weighted: 70/30 of 20 messages.
		var recipients []string
		for i := range 20 {
			recipients = append(recipients, fmt.Sprintf("467020000%02d", i+10))
		}
		count := map[string]int{}
		for _, id := range sendIDs(t, e, map[string]any{"recipients": recipients, "message": "split", "type": "SMS"}) {
			count[ended(t, e, id).Provider]++
		}
		if count["dear"] < 12 || count["dear"] > 16 || count["dear"]+count["third"] != 20 {
			t.Fatalf("weighted split %v, want about 14/6", count)
		}

		// Margin guard: dear costs 5 and the account pays 2: NO_ROUTE,
		// refunded; with allowLoss it goes.
		before, err := e.st.Account(ctx, e.account.ID)
		if err != nil {
			t.Fatal(err)
		}
		m = ended(t, e, msgID(t, send(t, e, e.liveKey, map[string]any{"to": "46703000011", "message": "hi", "type": "SMS",
			"callbackUrl": e.hooks.url()}), 0))
		if m.Status != domain.Failed || m.ErrorCode != domain.CodeNoRoute || m.Route != "guarded" || m.Charged != 0 || m.Provider != "" {
			t.Fatalf("margin guard: %+v", m)
		}
		after, err := e.st.Account(ctx, e.account.ID)
		if err != nil || after.Balance != before.Balance {
			t.Fatalf("NO_ROUTE not refunded: %d → %d (%v)", before.Balance, after.Balance, err)
		}
		checkRefusalSaysWhy(t, e, m.ID, `every provider of route "guarded" costs more for this destination than the message's price (margin guard)`)
		m = sendOne(t, e, "46706000011")
		if m.Status != domain.Failed || m.ErrorCode != domain.CodeNoRoute ||
			m.ErrorMessage != `no provider of route "uncosted" has a cost for this destination (least-cost routing)` {
			t.Fatalf("least cost without a cost: %+v", m)
		}
		if m = sendOne(t, e, "46704000011"); m.Provider != "dear" || m.Cost != 5_000_000 {
			t.Fatalf("allowLoss: %+v", m)
		}

		// Failover: third refuses as if down; its breaker opens at the
		// first failure and the retry goes to dear.
		smscs["third"].SetSilent(true)
		ids := sendIDs(t, e, map[string]any{"to": "46705000011", "message": "backed", "type": "SMS"})
		driveRetries(t, e, ids, func() bool { return true })
		if m = ended(t, e, ids[0]); m.Provider != "dear" || m.Status != domain.Delivered || m.Route != "backed" {
			t.Fatalf("failover: %+v", m)
		}
		checkOperatorViews(t, e)
		checkRoutesPage(t, e)
	})
}

// checkRefusalSaysWhy: a NO_ROUTE refusal gives its reason in the status
// query and the webhook, and the refunded message shows that it cost
// nothing, in the API's message and list and on the panel's list and page.
func checkRefusalSaysWhy(t *testing.T, e *env, mid, reason string) {
	t.Helper()
	m := e.do("GET", "/api/v1/integration/messages/"+mid, e.liveKey, nil).json(t)
	if m["errorCode"] != "NO_ROUTE" || m["errorMessage"] != reason || m["credits"] != 0.0 {
		t.Fatalf("status query of a refused message: %v", m)
	}
	list := e.do("GET", "/api/v1/integration/messages?to=46703000011", e.liveKey, nil).json(t)
	if ms, _ := list["messages"].([]any); len(ms) != 1 || ms[0].(map[string]any)["credits"] != 0.0 {
		t.Fatalf("the list shows the refunded message: %v", list)
	}
	var hooked map[string]any
	polltest.For(t, "the FAILED webhook", 10*time.Second, func() bool {
		for _, h := range e.hooks.all() {
			if h.payload["messageId"] == mid && h.payload["status"] == "FAILED" {
				hooked = h.payload
				return true
			}
		}
		return false
	})
	if hooked["errorCode"] != "NO_ROUTE" || hooked["errorMessage"] != reason {
		t.Fatalf("the webhook of a refused message: %v", hooked)
	}
	b := e.browser()
	b.login(e.user("owner"))
	if p := b.get("/messages/" + mid); p.status != 200 || !strings.Contains(p.body, "<dt>Credits</dt><dd>0</dd>") ||
		!strings.Contains(p.body, "margin guard") {
		t.Fatalf("the panel's message page: %d %s", p.status, p.body)
	}
	if p := b.get("/messages?to=46703000011"); p.status != 200 || !strings.Contains(p.body, `<td class="aside pre">0<span class="phone-only"> credits</span></td>`) {
		t.Fatalf("the panel's message list: %d %s", p.status, p.body)
	}
}

// checkRoutesPage: the panel's Operator → Routes shows the routes, the
// simulator's answer and the margins, to operators only.
func checkRoutesPage(t *testing.T, e *env) {
	t.Helper()
	b := e.browser()
	b.login(e.user("operator"))
	p := b.get("/operator/routes")
	for _, want := range []string{"cheapest", "least-cost", "quality (last 20)", "weight 70", "Margins, last 30 days", ">cheap<", "50.0 %"} {
		if p.status != 200 || !strings.Contains(p.body, want) {
			t.Fatalf("routes page: %d, no %q in %s", p.status, want, p.body)
		}
	}
	p = b.get("/operator/routes?to=46703000011&type=SMS&account=" + e.account.ID)
	for _, want := range []string{"Route <strong>guarded</strong>", "NO_ROUTE", "no: cost above the price (margin guard)", ">-3<"} {
		if p.status != 200 || !strings.Contains(p.body, want) {
			t.Fatalf("simulated on the page: %d, no %q in %s", p.status, want, p.body)
		}
	}
	if p = b.get("/operator/routes?to=12&type=SMS&account=" + e.account.ID); p.status != 400 || !strings.Contains(p.body, `id="err-to"`) {
		t.Fatalf("a bad number: %d %s", p.status, p.body)
	}
	list := e.mg("GET", "/api/v1/manage/messages?account="+e.account.ID+"&to=46700000011", e.member("operator"), nil).json(t)["messages"].([]any)
	mid := list[0].(map[string]any)["messageId"].(string)
	if p := b.get("/messages/" + mid + "?account=" + e.account.ID); p.status != 200 || !strings.Contains(p.body, "<dd>0.01 USD") ||
		!strings.Contains(p.body, "<dd>cheapest</dd>") {
		t.Fatalf("an operator's message page: %d %s", p.status, p.body)
	}
	owner := e.browser()
	owner.login(e.user("owner"))
	if p := owner.get("/messages/" + mid); p.status != 200 || strings.Contains(p.body, "0.01 USD") || strings.Contains(p.body, "cheapest") {
		t.Fatalf("the owner's message page shows costs: %d", p.status)
	}
	if p := owner.get("/operator/routes?to=46703000011&type=SMS&account=" + e.account.ID); p.status != 403 || strings.Contains(p.body, "guarded") {
		t.Fatalf("an owner on the routes page: %d", p.status)
	}
}

// checkOperatorViews: costs reach operators, never the account's own
// users nor the integration API; the routes and margins are operators'.
func checkOperatorViews(t *testing.T, e *env) {
	t.Helper()
	op, owner := e.member("operator"), e.member("owner")
	list := e.mg("GET", "/api/v1/manage/messages?account="+e.account.ID+"&to=46700000011", op, nil).json(t)["messages"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["cost"] != 0.01 || list[0].(map[string]any)["route"] != "cheapest" ||
		list[0].(map[string]any)["currency"] != "USD" {
		t.Fatalf("operator's message list: %v", list)
	}
	mid := list[0].(map[string]any)["messageId"].(string)
	for what, body := range map[string][]byte{
		"owner's list":     e.mg("GET", "/api/v1/manage/messages?to=46700000011", owner, nil).body,
		"owner's message":  e.mg("GET", "/api/v1/manage/messages/"+mid, owner, nil).body,
		"integration":      e.do("GET", "/api/v1/integration/messages/"+mid, e.liveKey, nil).body,
		"integration list": e.do("GET", "/api/v1/integration/messages?to=46700000011", e.liveKey, nil).body,
	} {
		if s := string(body); !strings.Contains(s, mid) || strings.Contains(s, `"cost"`) || strings.Contains(s, `"route"`) {
			t.Errorf("%s shows costs (or not the message): %s", what, body)
		}
	}
	if got := e.mg("GET", "/api/v1/manage/messages/"+mid+"?account="+e.account.ID, op, nil).json(t); got["cost"] != 0.01 {
		t.Errorf("operator's message: %v", got)
	}

	routes := e.mg("GET", "/api/v1/manage/routes", op, nil).json(t)
	rs := routes["routes"].([]any)
	best := rs[1].(map[string]any)
	cheap := best["providers"].([]any)[0].(map[string]any)
	if len(rs) != 7 || routes["currency"] != "USD" || best["strategy"] != "quality" || best["window"] != 20.0 ||
		cheap["name"] != "cheap" || cheap["deliveredRatio"] != 0.5 || cheap["costPrefixes"] != 1.0 {
		t.Fatalf("routes: %v", routes)
	}
	sim := e.mg("POST", "/api/v1/manage/routes/simulate", op, map[string]any{"to": "46703000011", "type": "sms", "account": e.account.ID})
	res := sim.json(t)
	c := res["candidates"].([]any)[0].(map[string]any)
	if sim.status != 200 || res["route"] != "guarded" || res["chosen"] != nil || res["price"] != 2.0 || c["cost"] != 5.0 ||
		c["margin"] != -3.0 || c["eligible"] != false || c["reason"] != "cost above the price (margin guard)" {
		t.Fatalf("simulate: %d %s", sim.status, sim.body)
	}
	res = e.mg("POST", "/api/v1/manage/routes/simulate", op, map[string]any{"to": "46700000099", "type": "SMS", "account": e.account.ID}).json(t)
	if res["chosen"] != "cheap" || res["strategy"] != "least-cost" {
		t.Fatalf("simulate least-cost: %v", res)
	}
	bad := e.mg("POST", "/api/v1/manage/routes/simulate", op, map[string]any{"to": "12", "type": "FAX"})
	if f := fieldsOf(t, bad); bad.status != 400 || strings.Join(f, ",") != "to,type,account" {
		t.Fatalf("bad simulation: %d %s", bad.status, bad.body)
	}
	wantProblem(t, "unknown account", e.mg("POST", "/api/v1/manage/routes/simulate", op,
		map[string]any{"to": "46700000099", "type": "SMS", "account": "acc_nope"}), 404, "NOT_FOUND")

	margins := e.mg("GET", "/api/v1/manage/reports/margins?groupBy=provider", op, nil).json(t)
	rows := map[string]map[string]any{}
	for _, r := range margins["rows"].([]any) {
		rows[r.(map[string]any)["key"].(string)] = r.(map[string]any)
	}
	if margins["currency"] != "USD" || rows["cheap"]["messages"] != 2.0 || rows["cheap"]["cost"] != 0.02 ||
		rows["cheap"]["price"] != 4.0 || rows["cheap"]["margin"] != 3.98 || rows["cheap"]["deliveredRatio"] != 0.5 {
		t.Fatalf("margins: %v", margins)
	}
	day := e.mg("GET", "/api/v1/manage/reports/margins?groupBy=day&from="+e.clock.Now().UTC().Format(time.DateOnly), op, nil).json(t)
	if rows := day["rows"].([]any); len(rows) != 1 || rows[0].(map[string]any)["key"] != e.clock.Now().UTC().Format(time.DateOnly) {
		t.Fatalf("margins by day: %v", day)
	}
	bad = e.mg("GET", "/api/v1/manage/reports/margins?groupBy=route&from=yesterday", op, nil)
	if f := fieldsOf(t, bad); bad.status != 400 || strings.Join(f, ",") != "from,groupBy" {
		t.Fatalf("bad report: %d %s", bad.status, bad.body)
	}

	// An account's owner, and another account's, reach none of it.
	other, _ := otherAccount(t, e)
	_, _, err := createTestUser(context.Background(), e.st, other.ID, "owner@other.example", "owner", testPassword, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	stranger := e.login("owner@other.example", testPassword)
	for _, token := range []string{owner, stranger} {
		wantProblem(t, "routes", e.mg("GET", "/api/v1/manage/routes", token, nil), 403, "FORBIDDEN")
		wantProblem(t, "simulate", e.mg("POST", "/api/v1/manage/routes/simulate", token,
			map[string]any{"to": "46700000099", "type": "SMS", "account": e.account.ID}), 403, "FORBIDDEN")
		wantProblem(t, "margins", e.mg("GET", "/api/v1/manage/reports/margins", token, nil), 403, "FORBIDDEN")
	}
	wantProblem(t, "another account's message", e.mg("GET", "/api/v1/manage/messages/"+mid, stranger, nil), 404, "NOT_FOUND")
}

// Routes that know money, against the independent SMSC simulator
// (node-smpp) rather than this repository's own: two instances, a cheap
// one whose every receipt says UNDELIV (its FAIL_PERMILLE) and a dear one
// that delivers. Least cost takes the cheap one; quality leaves it once its
// receipts show it failing; failover leaves the dear one once its process
// is killed. CI's SMPP peer step sets MSGSVC_TEST_SMSC_SIM_DIR.
func TestRoutesAcrossSimulatorsPeer(t *testing.T) {
	dir := os.Getenv("MSGSVC_TEST_SMSC_SIM_DIR")
	if dir == "" {
		t.Skip("set MSGSVC_TEST_SMSC_SIM_DIR to the SMSC simulator's folder (shared/peers/smsc-sim) to run this test")
	}
	forEachDialect(t, func(t *testing.T, d string) {
		cheap := smpptest.StartPeer(t, dir, "FAIL_PERMILLE=1000")
		dear := smpptest.StartPeer(t, dir)
		yaml := fmt.Sprintf(`currency: USD
providers:
  - name: cheap
    type: smpp
    smpp: {addr: %q, systemId: kannel, password: kannel}
    costs: {"46": 0.01}
    breaker: {failures: 1, cooldown: 10m}
  - name: dear
    type: smpp
    smpp: {addr: %q, systemId: kannel, password: kannel}
    costs: {"46": 0.02}
    breaker: {failures: 1, cooldown: 10m}
routes:
  - {name: cheapest, channel: SMS, prefixes: ["46700"], providers: [dear, cheap], strategy: least-cost}
  - {name: best, channel: SMS, prefixes: ["46701"], providers: [cheap, dear], strategy: quality, window: 20}
  - {name: backed, channel: SMS, prefixes: ["46705"], providers: [dear, cheap]}
`, cheap.Addr, dear.Addr)
		e := newEnv(t, d, envOptions{poll: 20 * time.Millisecond, lease: 2 * time.Second, file: yaml})

		// Quality: both unknown, so the tie goes to the cheaper; its
		// UNDELIV receipt then puts its ratio at 0 and the route moves.
		var got []string
		for i := range 3 {
			m := sendOne(t, e, fmt.Sprintf("4670100001%d", i))
			got = append(got, m.Provider+":"+string(m.Status))
		}
		if s := strings.Join(got, ","); s != "cheap:FAILED,dear:DELIVERED,dear:DELIVERED" {
			t.Fatalf("quality: %s", s)
		}

		// Least cost ignores quality: the cheaper, listed second, with its cost.
		if m := sendOne(t, e, "46700000011"); m.Provider != "cheap" || m.Route != "cheapest" || m.Cost != 10_000 {
			t.Fatalf("least-cost: %+v", m)
		}

		// Failover: the dear simulator dies; its breaker opens at the first
		// failed hand-over and the message goes to the next provider.
		if err := dear.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		if _, err := dear.Process.Wait(); err != nil && !strings.Contains(err.Error(), "child process") {
			t.Logf("wait for the killed simulator: %v", err)
		}
		mid := msgID(t, send(t, e, e.liveKey, map[string]any{"to": "46705000011", "message": "hi", "type": "SMS"}), 0)
		var m domain.Message
		polltest.For(t, "failover to cheap", 30*time.Second, func() bool {
			var err error
			if m, err = e.st.MessageByID(t.Context(), mid); err != nil {
				t.Fatal(err)
			}
			return m.Status.Final()
		})
		if m.Provider != "cheap" || m.Route != "backed" {
			t.Fatalf("failover: %+v", m)
		}
	})
}

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
