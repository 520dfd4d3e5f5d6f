package app

import (
	"context"
	"fmt"
	"os"
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
	if p := b.get("/messages?to=46703000011"); p.status != 200 || !strings.Contains(p.body, `<td data-label="Credits">0</td>`) {
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
