package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

const fraudBase = "/api/v1/manage/fraud"

// setFraud sets an account's rules (or the defaults, account "") as an
// operator.
func (e *env) setFraud(op, account string, rules map[string]any) map[string]any {
	e.t.Helper()
	q := "?account=" + account
	if account == "" {
		q = "?default=true"
	}
	r := e.mg("PUT", fraudBase+q, op, rules)
	if r.status != 200 {
		e.t.Fatalf("PUT fraud%s: %d %s", q, r.status, r.body)
	}
	return r.json(e.t)
}

// sendOne sends one SMS (to a number the simulator delivers to: not one
// ending in 0001 to 0005) and returns its answer's only message.
func (e *env) sendOne(key, to string) map[string]any {
	e.t.Helper()
	r := e.do("POST", "/api/v1/integration/messages", key, map[string]any{"to": to, "message": "hi", "type": "SMS"})
	if r.status != 202 {
		e.t.Fatalf("send to %s: %d %s", to, r.status, r.body)
	}
	return r.json(e.t)["messages"].([]any)[0].(map[string]any)
}

// balance is what the account's ledger sums to, as it stands once the
// sends answered.
func (e *env) balance(accountID string) int64 {
	e.t.Helper()
	sum, err := e.st.LedgerSum(context.Background(), accountID)
	if err != nil {
		e.t.Fatal(err)
	}
	return sum
}

// A blocked message is FAILED with FRAUD_SUSPECTED at once, and neither
// the sub-account nor its reseller pays for it; the decision is kept on
// it for operators, in the hour's decisions, and alerted once. Another
// tenant sending to the same number is not stopped by it.
func TestFraudBlockChargesNoLevel(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		op := e.member("operator")
		reseller := e.childAccount("reseller", "", 1000)
		child := e.childAccount("child", reseller.ID, 100)
		key, _ := e.addKey(child.ID, "live")
		e.setFraud(op, child.ID, map[string]any{"perRecipientHourly": 2, "action": "block"})
		const to = "5511988880099"
		for i := range 2 {
			if m := e.sendOne(key.Secret, to); m["status"] != "SENDING" {
				t.Fatalf("message %d under the cap: %v", i+1, m)
			}
		}
		childBefore, resellerBefore := e.balance(child.ID), e.balance(reseller.ID)
		if childBefore == 100_000_000 || resellerBefore == 1000_000_000 {
			t.Fatalf("the first messages charged nothing: %d %d", childBefore, resellerBefore)
		}
		m := e.sendOne(key.Secret, to)
		if m["status"] != "FAILED" || m["credits"] != 0.0 {
			t.Fatalf("third message: %v", m)
		}
		if c, r := e.balance(child.ID), e.balance(reseller.ID); c != childBefore || r != resellerBefore {
			t.Fatalf("blocked message charged: child %d → %d, reseller %d → %d", childBefore, c, resellerBefore, r)
		}
		id := m["messageId"].(string)
		got := e.do("GET", "/api/v1/integration/messages/"+id, key.Secret, nil).json(t)
		if got["status"] != "FAILED" || got["errorCode"] != "FRAUD_SUSPECTED" || got["fraud"] != nil {
			t.Fatalf("status query: %v", got)
		}
		detail := e.mg("GET", "/api/v1/manage/messages/"+id+"?account="+child.ID, op, nil).json(t)
		dec, _ := detail["fraud"].(map[string]any)
		if dec["rule"] != "perRecipientHourly" || dec["count"] != 3.0 || dec["cap"] != 2.0 || dec["action"] != "block" || dec["key"] != to {
			t.Fatalf("operator's detail: %v", detail["fraud"])
		}
		hours := e.mg("GET", fraudBase+"/blocks?account="+child.ID, op, nil).json(t)["hours"].([]any)
		if len(hours) != 1 || hours[0].(map[string]any)["messages"] != 1.0 || hours[0].(map[string]any)["key"] != "5511988880" {
			t.Fatalf("blocks: %v", hours)
		}
		// Once more: one alert for the rule and range this hour.
		e.sendOne(key.Secret, to)
		evs, err := e.st.AlertEvents(context.Background(), child.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Event != domain.EventFraudSuspected {
			t.Fatalf("alerts: %v", evs)
		}
		// Another tenant's sends to the same number are its own.
		if m := e.sendOne(e.liveKey, to); m["status"] != "SENDING" {
			t.Fatalf("another tenant stopped: %v", m)
		}
	})
}

// A held message waits, charged, until an operator releases it (it goes
// out) or rejects it (refunded); one nobody decides is rejected after 24
// hours. Only operators decide, and only held messages.
func TestFraudHoldReleaseRejectExpire(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{poll: 50 * time.Millisecond})
		op := e.member("operator")
		e.setFraud(op, e.account.ID, map[string]any{"perRecipientHourly": 1, "action": "hold"})
		const to = "5511977770099"
		e.sendOne(e.liveKey, to)
		start := e.balance(e.account.ID)
		held := e.sendOne(e.liveKey, to)
		if held["status"] != "HELD" {
			t.Fatalf("second message: %v", held)
		}
		if b := e.balance(e.account.ID); b >= start {
			t.Fatalf("a held message is charged: %d → %d", start, b)
		}
		heldID := held["messageId"].(string)
		list := e.mg("GET", fraudBase+"/held", op, nil).json(t)["messages"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["messageId"] != heldID || list[0].(map[string]any)["fraud"] == nil {
			t.Fatalf("held list: %v", list)
		}
		wantProblem(t, "an owner releasing", e.mg("POST", fraudBase+"/held/"+heldID+"/release", e.member("owner"), nil), 403, "FORBIDDEN")
		wantProblem(t, "an unknown id", e.mg("POST", fraudBase+"/held/msg_nope/release", op, nil), 404, "NOT_FOUND")

		r := e.mg("POST", fraudBase+"/held/"+heldID+"/release", op, nil)
		if r.status != 200 || r.json(t)["status"] != "SENDING" {
			t.Fatalf("release: %d %s", r.status, r.body)
		}
		polltest.Until(t, "the released message delivered", func() bool {
			return e.do("GET", "/api/v1/integration/messages/"+heldID, e.liveKey, nil).json(t)["status"] == "DELIVERED"
		})
		wantProblem(t, "releasing twice", e.mg("POST", fraudBase+"/held/"+heldID+"/release", op, nil), 409, "MESSAGE_NOT_HELD")

		before := e.balance(e.account.ID)
		rejected := e.sendOne(e.liveKey, to)["messageId"].(string)
		r = e.mg("POST", fraudBase+"/held/"+rejected+"/reject", op, nil)
		if r.status != 200 || r.json(t)["status"] != "FAILED" || r.json(t)["errorCode"] != "FRAUD_SUSPECTED" {
			t.Fatalf("reject: %d %s", r.status, r.body)
		}
		if b := e.balance(e.account.ID); b != before {
			t.Fatalf("a rejected message is not refunded: %d → %d", before, b)
		}

		left := e.sendOne(e.liveKey, to)
		if left["status"] != "HELD" {
			t.Fatalf("fourth: %v", left)
		}
		e.clock.Advance(domain.HoldFor + time.Minute)
		leftID := left["messageId"].(string)
		polltest.Until(t, "the hold rejected after 24 hours", func() bool {
			return e.do("GET", "/api/v1/integration/messages/"+leftID, e.liveKey, nil).json(t)["errorCode"] == "FRAUD_SUSPECTED"
		})
		if b := e.balance(e.account.ID); b != before {
			t.Fatalf("an expired hold is not refunded: %d → %d", before, b)
		}
		op = e.member("operator") // the first session expired with the day
		detail := e.mg("GET", "/api/v1/manage/messages/"+leftID+"?account="+e.account.ID, op, nil).json(t)
		if dec, _ := detail["fraud"].(map[string]any); dec["resolution"] != "expired" || dec["resolvedBy"] != "sweeper" {
			t.Fatalf("expired decision: %v", dec)
		}
	})
}

// A held message is its integrator's to cancel, as any message not yet
// handed over: it is refunded, its campaign counts it HELD and stays
// SENDING until then, and the hold's decision says who ended it. Another
// tenant can neither see nor cancel it, and an operator cannot release
// it afterwards. Erasing a held message's recipient cancels it, so no
// release can send to the hash.
func TestFraudHeldCanceledByItsIntegrator(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		op := e.member("operator")
		e.setFraud(op, e.account.ID, map[string]any{"perRecipientHourly": 1, "action": "hold"})
		const to = "5511966660099"
		e.sendOne(e.liveKey, to)
		start := e.balance(e.account.ID)
		r := e.do("POST", "/api/v1/integration/messages", e.liveKey, map[string]any{"to": to, "message": "hi", "type": "SMS"})
		if r.status != 202 {
			t.Fatalf("send: %d %s", r.status, r.body)
		}
		sent := r.json(t)
		cid := sent["campaignId"].(string)
		heldID := sent["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		campaign := func() map[string]any {
			return e.do("GET", "/api/v1/integration/campaigns/"+cid, e.liveKey, nil).json(t)
		}
		if c := campaign(); c["status"] != "SENDING" || c["counts"].(map[string]any)["HELD"] != 1.0 ||
			c["counts"].(map[string]any)["SENDING"] != 0.0 {
			t.Fatalf("the campaign of a held message: %v", c)
		}
		charged := e.balance(e.account.ID)
		if charged >= start {
			t.Fatalf("the held message is not charged: %d → %d", start, charged)
		}

		other := e.addAccount(NewAccount{Name: "Other", Tier: "enterprise", Currency: "USD", Country: "55"})
		otherKey, _ := e.addKey(other.ID, "live")
		wantProblem(t, "another tenant's cancel", e.do("POST", "/api/v1/integration/messages/"+heldID+"/cancel", otherKey.Secret, nil), 404, "NOT_FOUND")
		if got := e.do("POST", "/api/v1/integration/campaigns/"+cid+"/cancel", otherKey.Secret, nil); got.status != 404 {
			t.Fatalf("another tenant's campaign cancel: %d %s", got.status, got.body)
		}
		if m := e.do("GET", "/api/v1/integration/messages/"+heldID, e.liveKey, nil).json(t); m["status"] != "HELD" {
			t.Fatalf("after the other tenant's tries: %v", m)
		}

		c := e.do("POST", "/api/v1/integration/campaigns/"+cid+"/cancel", e.liveKey, nil)
		if c.status != 200 || c.json(t)["canceled"] != 1.0 {
			t.Fatalf("the campaign's cancel: %d %s", c.status, c.body)
		}
		if m := e.do("GET", "/api/v1/integration/messages/"+heldID, e.liveKey, nil).json(t); m["status"] != "CANCELED" {
			t.Fatalf("the canceled held message: %v", m)
		}
		if b := e.balance(e.account.ID); b != start {
			t.Fatalf("a canceled held message is not refunded: %d → %d (before it %d)", charged, b, start)
		}
		if c := campaign(); c["status"] != "CANCELED" || c["counts"].(map[string]any)["HELD"] != 0.0 ||
			c["counts"].(map[string]any)["CANCELED"] != 1.0 {
			t.Fatalf("the campaign after the cancel: %v", c)
		}
		detail := e.mg("GET", "/api/v1/manage/messages/"+heldID+"?account="+e.account.ID, op, nil).json(t)
		if dec, _ := detail["fraud"].(map[string]any); dec["resolution"] != "canceled" || dec["resolvedBy"] != "integrator" {
			t.Fatalf("the canceled hold's decision: %v", detail["fraud"])
		}
		wantProblem(t, "releasing a canceled hold", e.mg("POST", fraudBase+"/held/"+heldID+"/release", op, nil), 409, "MESSAGE_NOT_HELD")
		if list := e.mg("GET", fraudBase+"/held", op, nil).json(t)["messages"].([]any); len(list) != 0 {
			t.Fatalf("held list after the cancel: %v", list)
		}

		// The one-message cancel, and the erasure of a held message.
		one := e.sendOne(e.liveKey, to)
		if one["status"] != "HELD" {
			t.Fatalf("third message: %v", one)
		}
		m := e.do("POST", "/api/v1/integration/messages/"+one["messageId"].(string)+"/cancel", e.liveKey, nil)
		if m.status != 200 || m.json(t)["status"] != "CANCELED" {
			t.Fatalf("a held message's cancel: %d %s", m.status, m.body)
		}
		erased := e.sendOne(e.liveKey, to)["messageId"].(string)
		red := e.do("POST", "/api/v1/integration/messages/"+erased+"/redact", e.liveKey, nil)
		if red.status != 200 || red.json(t)["status"] != "CANCELED" || red.json(t)["redacted"] != true {
			t.Fatalf("a held message erased: %d %s", red.status, red.body)
		}
		wantProblem(t, "releasing an erased hold", e.mg("POST", fraudBase+"/held/"+erased+"/release", op, nil), 409, "MESSAGE_NOT_HELD")
		if b := e.balance(e.account.ID); b != start {
			t.Fatalf("after both cancels: %d, want %d", b, start)
		}
	})
}

// A destination outside the allowed countries is refused on every front,
// charged nothing.
func TestFraudGeoOnEveryFront(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := smppEnv(t, d)
		op := e.member("operator")
		e.setFraud(op, e.account.ID, map[string]any{"allowedCountries": []string{"55"}})
		before := e.balance(e.account.ID)

		r := e.do("POST", "/api/v1/integration/messages", e.liveKey, map[string]any{"recipients": []string{"5511999990000", "447911123456"},
			"message": "hi", "type": "SMS"})
		wantProblem(t, "REST", r, 403, "DESTINATION_NOT_ALLOWED")
		if errs := r.json(t)["errors"].([]any); len(errs) != 1 || errs[0].(map[string]any)["field"] != "recipients[1]" {
			t.Fatalf("REST errors: %s", r.body)
		}

		e.approveSMS(e.account.ID, "15550001111")
		tw := e.addTwilioLogin(e.account.ID, domain.Live)
		status, m := e.twilio("POST", "/2010-04-01/Accounts/"+tw.sid+"/Messages.json", tw, url.Values{"To": {"+447911123456"},
			"From": {"+15550001111"}, "Body": {"hi"}})
		if status != 400 || m["code"] != 21408.0 {
			t.Fatalf("Twilio front: %d %v", status, m)
		}

		sys, pw := e.smppUser(e.account.ID, "live", "geo")
		c := e.dialBound(pdu.BindTransceiver, sys, pw)
		if resp := c.Submit("", "447911123456", "hi", 0); resp.Status != pdu.StatusInvDstAdr {
			t.Fatalf("SMPP: %s", resp.Status)
		}
		if resp := c.Submit("", "5511999990000", "hi", 0); resp.Status != pdu.StatusOK {
			t.Fatalf("SMPP inside the list: %s", resp.Status)
		}
		if b := e.balance(e.account.ID); before-b != 1_000_000 {
			t.Fatalf("balance moved by %d, want the one message inside the list", before-b)
		}
	})
}

// Roles: a developer may not change the rules; an admin may only narrow
// the account's countries within the operator's list; another tenant's
// admin cannot reach them; only operators read the defaults.
func TestFraudRoles(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		op := e.member("operator")
		dflt := e.setFraud(op, "", map[string]any{"allowedCountries": []string{"1"}, "perRangeHourly": 100})
		if dflt["action"] != "block" {
			t.Fatalf("defaults: %v", dflt)
		}
		admin, dev, viewer := e.member("admin"), e.member("developer"), e.member("viewer")
		got := e.mg("GET", fraudBase, viewer, nil).json(t)
		if fmt.Sprint(got["allowedCountries"]) != "[55 1]" || got["perRangeHourly"] != 100.0 {
			t.Fatalf("viewer reads %v", got)
		}
		narrow := map[string]any{"allowedCountries": []string{"55"}, "perRecipientHourly": nil, "perRangeHourly": 100, "burstFactor": nil,
			"action": "block", "trusted": []string{}}
		wantProblem(t, "a developer", e.mg("PUT", fraudBase, dev, narrow), 403, "FORBIDDEN")
		if r := e.mg("PUT", fraudBase, admin, narrow); r.status != 200 || fmt.Sprint(r.json(t)["allowedCountries"]) != "[55]" {
			t.Fatalf("admin narrowing: %d %s", r.status, r.body)
		}
		wider := map[string]any{"allowedCountries": []string{"55", "44"}, "perRangeHourly": 100}
		wantProblem(t, "an admin widening", e.mg("PUT", fraudBase, admin, wider), 403, "FORBIDDEN")
		looser := map[string]any{"allowedCountries": []string{"55"}, "perRangeHourly": 1000}
		wantProblem(t, "an admin loosening a rule", e.mg("PUT", fraudBase, admin, looser), 403, "FORBIDDEN")
		wantProblem(t, "an admin reading the defaults", e.mg("GET", fraudBase+"?default=true", admin, nil), 403, "FORBIDDEN")
		other := e.addAccount(NewAccount{Name: "Other", Tier: "enterprise", Credits: 10, Currency: "USD", Country: "44"})
		otherAdmin := e.ownerOf(other.ID, "owner@other.example")
		wantProblem(t, "another tenant", e.mg("PUT", fraudBase+"?account="+e.account.ID, otherAdmin, narrow), 403, "FORBIDDEN")
		wantProblem(t, "a bad rule", e.mg("PUT", fraudBase+"?account="+e.account.ID, op, map[string]any{"action": "drop"}), 400, "VALIDATION_ERROR")

		// The narrowing bites on the next send; the home country still goes.
		wantProblem(t, "a send to 1", e.do("POST", "/api/v1/integration/messages", e.liveKey,
			map[string]any{"to": "14155550123", "message": "hi", "type": "SMS"}), 403, "DESTINATION_NOT_ALLOWED")
		e.sendOne(e.liveKey, "5511999990000")
		// An operator's list for the account ends the narrowing.
		e.setFraud(op, e.account.ID, map[string]any{"allowedCountries": []string{"55", "1"}})
		e.sendOne(e.liveKey, "14155550123")
	})
}

// Three nodes on one PostgreSQL database enforce one cap: thirty sends to
// one number spread over them, ten go.
func TestFraudThreeNodesOneLimit(t *testing.T) {
	storetest.Need(t, "postgres")
	e := newEnv(t, "postgres", envOptions{})
	op := e.member("operator")
	e.setFraud(op, e.account.ID, map[string]any{"perRecipientHourly": 10})
	nodes := []*env{e, e.nodeNamed("fraud-2"), e.nodeNamed("fraud-3")}
	var mu sync.Mutex
	statuses := map[string]int{}
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := nodes[i%3]
			r := n.do("POST", "/api/v1/integration/messages", e.liveKey, map[string]any{"to": "5511966660099", "message": "hi", "type": "SMS"})
			if r.status != 202 {
				t.Errorf("send: %d %s", r.status, r.body)
				return
			}
			mu.Lock()
			statuses[r.json(t)["messages"].([]any)[0].(map[string]any)["status"].(string)]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if statuses["SENDING"] != 10 || statuses["FAILED"] != 20 {
		t.Fatalf("statuses %v, want 10 SENDING and 20 FAILED", statuses)
	}
}

// nodeNamed starts another node on the env's database.
func (e *env) nodeNamed(name string) *env {
	e.t.Helper()
	cfg := e.srv.cfg
	cfg.Addr, cfg.NodeID, cfg.DataDir = "127.0.0.1:0", name, e.t.TempDir()
	srv, err := NewServer(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{Now: e.clock.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	other := &env{t: e.t, srv: srv, st: srv.Store(), base: "http://" + srv.Addr(), clock: e.clock, account: e.account,
		testKey: e.testKey, liveKey: e.liveKey, hooks: e.hooks, client: &http.Client{}}
	e.t.Cleanup(func() {
		other.client.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("node %s stopped with %v", name, err)
		}
	})
	return other
}
