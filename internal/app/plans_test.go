package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// Price plans and onboarding (section 14): an operator makes plans and
// accounts on them; a plan's change reaches its accounts' very next send
// (the cached account is read again); an account's own prices override
// its plan; its users read what they pay; and every path refuses a second
// account, a reseller and a role below the operator, changing nothing.
func TestPricePlans(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		const base = "/api/v1/manage"
		op := e.member("operator")
		owner, viewer := e.member("owner"), e.member("viewer")
		ok := func(what string, r response, status int) map[string]any {
			t.Helper()
			if r.status != status {
				t.Fatalf("%s: %d %s", what, r.status, r.body)
			}
			return r.json(t)
		}
		smsCredits := func(to string) float64 {
			t.Helper()
			r := send(t, e, e.liveKey, map[string]any{"to": to, "message": "hi", "type": "SMS"})
			return ok("send to "+to, r, 202)["credits"].(float64)
		}

		// Before any plan, Acme (home 55) pays the defaults.
		if got := smsCredits("5511999990001"); got != 1 {
			t.Fatalf("default home price = %v", got)
		}

		// A plan, the default; a second one.
		std := ok("create plan", e.mg("POST", base+"/price-plans", op, map[string]any{"name": "Standard", "default": true,
			"prices": map[string]any{"home": map[string]any{"smsSegment": 0.05}, "abroad": map[string]any{"smsSegment": 0.08},
				"countries": map[string]any{"44": map[string]any{"smsSegment": 0.04}}}}), 201)
		stdID := std["id"].(string)
		if !strings.HasPrefix(stdID, "pln_") || std["default"] != true || std["accounts"] != 0.0 {
			t.Fatalf("plan: %v", std)
		}
		vip := ok("second plan", e.mg("POST", base+"/price-plans", op, map[string]any{"name": "VIP",
			"prices": map[string]any{"home": map[string]any{"smsSegment": 0.03}}}), 201)
		vipID := vip["id"].(string)
		wantProblem(t, "a name taken", e.mg("POST", base+"/price-plans", op, map[string]any{"name": "VIP", "prices": map[string]any{}}), 400, "VALIDATION_ERROR")
		wantProblem(t, "a bad table", e.mg("POST", base+"/price-plans", op, map[string]any{"name": "Bad",
			"prices": map[string]any{"home": map[string]any{"smsSegment": -1}}}), 400, "VALIDATION_ERROR")

		// Onboarding: a new account starts on the default plan, or the one named.
		onDefault := ok("account on the default plan", e.mg("POST", base+"/accounts", op, map[string]any{"name": "Newco", "country": "44",
			"currency": "GBP", "tier": "basic"}), 201)
		if onDefault["pricePlan"] != stdID || onDefault["tier"] != "basic" || onDefault["currency"] != "GBP" {
			t.Fatalf("new account: %v", onDefault)
		}
		onVIP := ok("account on a named plan", e.mg("POST", base+"/accounts", op, map[string]any{"name": "Bigco", "country": "1",
			"pricePlan": vipID}), 201)
		if onVIP["pricePlan"] != vipID {
			t.Fatalf("new account on VIP: %v", onVIP)
		}
		wantProblem(t, "an unknown plan", e.mg("POST", base+"/accounts", op, map[string]any{"name": "X", "country": "1", "pricePlan": "pln_nope"}),
			400, "VALIDATION_ERROR")

		// Acme goes on the plan: its very next send pays the plan's price.
		ok("put Acme on the plan", e.mg("PUT", base+"/accounts/"+e.account.ID+"/price-plan", op, map[string]any{"planId": stdID}), 200)
		if got := smsCredits("5511999990002"); got != 0.05 {
			t.Fatalf("plan home price = %v", got)
		}
		if got := smsCredits("447911123401"); got != 0.04 {
			t.Fatalf("plan country price = %v", got)
		}
		// The plan changes: so does Acme's next send.
		ok("edit plan", e.mg("PUT", base+"/price-plans/"+stdID, op, map[string]any{"prices": map[string]any{
			"home": map[string]any{"smsSegment": 0.06}}}), 200)
		if got := smsCredits("5511999990003"); got != 0.06 {
			t.Fatalf("edited plan home price = %v", got)
		}
		if got := smsCredits("447911123402"); got != 2 {
			t.Fatalf("a country the edited plan no longer names = %v", got)
		}
		// Acme's own prices override its plan, rate by rate.
		ok("override", e.mg("PUT", base+"/accounts/"+e.account.ID, op, map[string]any{"prices": map[string]any{
			"countries": map[string]any{"44": map[string]any{"smsSegment": 0.5}}}}), 200)
		if got, home := smsCredits("447911123403"), smsCredits("5511999990004"); got != 0.5 || home != 0.06 {
			t.Fatalf("override %v, home from the plan %v", got, home)
		}

		// Its users read what they pay.
		pr := ok("prices", e.mg("GET", base+"/prices", viewer, nil), 200)
		plan, _ := pr["plan"].(map[string]any)
		prices, _ := pr["prices"].(map[string]any)
		overrides, _ := pr["overrides"].(map[string]any)
		if plan["id"] != stdID || plan["name"] != "Standard" || prices["home"].(map[string]any)["smsSegment"] != 0.06 ||
			overrides["countries"].(map[string]any)["44"].(map[string]any)["smsSegment"] != 0.5 || overrides["home"] != nil {
			t.Fatalf("prices: %v", pr)
		}
		if pr := ok("operator reads prices", e.mg("GET", base+"/prices?account="+onVIP["id"].(string), op, nil), 200); pr["plan"].(map[string]any)["id"] != vipID {
			t.Fatalf("operator's read: %v", pr)
		}

		// A reseller: its children are priced by it, never by a plan, and
		// the margin guard weighs the child against the reseller's plan.
		res := ok("reseller", e.mg("POST", base+"/accounts", op, map[string]any{"name": "Resell", "country": "55", "reseller": true}), 201)
		resID := res["id"].(string)
		if res["pricePlan"] != stdID {
			t.Fatalf("reseller not on the default plan: %v", res)
		}
		if _, _, err := createTestUser(ctx, e.st, resID, "owner@resell.example", "owner", testPassword, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		resOwner := e.login("owner@resell.example", testPassword)
		child := ok("child", e.mg("POST", base+"/accounts", resOwner, map[string]any{"name": "Kid", "country": "55",
			"prices": map[string]any{"home": map[string]any{"smsSegment": 0.1}}}), 201)
		if child["pricePlan"] != nil {
			t.Fatalf("a child on a plan: %v", child)
		}
		wantProblem(t, "a child undercutting the reseller's plan", e.mg("POST", base+"/accounts", resOwner, map[string]any{"name": "Cheap",
			"country": "55", "prices": map[string]any{"home": map[string]any{"smsSegment": 0.01}}}), 400, "VALIDATION_ERROR")
		wantProblem(t, "a plan for a child", e.mg("PUT", base+"/accounts/"+child["id"].(string)+"/price-plan", op, map[string]any{"planId": vipID}),
			400, "VALIDATION_ERROR")
		wantProblem(t, "a reseller naming a plan for its child", e.mg("POST", base+"/accounts", resOwner, map[string]any{"name": "Kid2",
			"country": "55", "pricePlan": vipID}), 400, "VALIDATION_ERROR")

		// Whose is this? A second account, a reseller and a role below the
		// operator are refused on every path, and nothing changes.
		other := ok("second account", e.mg("POST", base+"/accounts", op, map[string]any{"name": "Other", "country": "55"}), 201)
		otherID := other["id"].(string)
		if _, _, err := createTestUser(ctx, e.st, otherID, "owner@other.example", "owner", testPassword, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		otherOwner := e.login("owner@other.example", testPassword)
		for _, who := range []struct{ name, token string }{{"owner", owner}, {"viewer", viewer}, {"another account's owner", otherOwner},
			{"a reseller's owner", resOwner}} {
			wantProblem(t, who.name+" listing plans", e.mg("GET", base+"/price-plans", who.token, nil), 403, "FORBIDDEN")
			wantProblem(t, who.name+" creating a plan", e.mg("POST", base+"/price-plans", who.token, map[string]any{"name": "Mine",
				"prices": map[string]any{"home": map[string]any{"smsSegment": 0}}}), 403, "FORBIDDEN")
			wantProblem(t, who.name+" editing a plan", e.mg("PUT", base+"/price-plans/"+stdID, who.token, map[string]any{"prices": map[string]any{
				"home": map[string]any{"smsSegment": 0}}}), 403, "FORBIDDEN")
			r := e.mg("PUT", base+"/accounts/"+e.account.ID+"/price-plan", who.token, map[string]any{"planId": vipID})
			if r.status != 403 && r.status != 404 {
				t.Fatalf("%s moving Acme to another plan: %d %s", who.name, r.status, r.body)
			}
			r = e.mg("PUT", base+"/accounts/"+otherID+"/price-plan", who.token, map[string]any{"planId": vipID})
			if r.status != 403 && r.status != 404 {
				t.Fatalf("%s moving Other to another plan: %d %s", who.name, r.status, r.body)
			}
		}
		wantProblem(t, "another account's prices", e.mg("GET", base+"/prices?account="+otherID, owner, nil), 404, "NOT_FOUND")
		wantProblem(t, "a reseller reading an account outside its tree", e.mg("GET", base+"/prices?account="+e.account.ID, resOwner, nil), 404, "NOT_FOUND")
		wantProblem(t, "an owner making an account", e.mg("POST", base+"/accounts", owner, map[string]any{"name": "Sneaky", "country": "55"}), 403, "FORBIDDEN")
		if got := smsCredits("5511999990005"); got != 0.06 {
			t.Fatalf("after the refusals Acme pays %v", got)
		}
		if o := ok("other's account", e.mg("GET", base+"/accounts/"+otherID, op, nil), 200); o["pricePlan"] != stdID {
			t.Fatalf("other moved: %v", o)
		}
		plans := ok("plans", e.mg("GET", base+"/price-plans", op, nil), 200)["plans"].([]any)
		if len(plans) != 2 || fmt.Sprint(plans[0].(map[string]any)["prices"]) != "map[home:map[smsSegment:0.06]]" {
			t.Fatalf("plans after the refusals: %v", plans)
		}
	})
}

// serve warns at start while no price plan is the default, and not once
// one is.
func TestServeWarnsWithoutDefaultPlan(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	var buf strings.Builder
	log := slog.New(slog.NewTextHandler(&buf, nil))
	warnNoDefaultPlan(context.Background(), e.st, log)
	if !strings.Contains(buf.String(), "no default price plan") {
		t.Fatalf("no warning: %q", buf.String())
	}
	buf.Reset()
	if r := e.mg("POST", "/api/v1/manage/price-plans", e.member("operator"), map[string]any{"name": "Std", "default": true,
		"prices": map[string]any{"home": map[string]any{"smsSegment": 0.05}}}); r.status != 201 {
		t.Fatalf("plan: %d %s", r.status, r.body)
	}
	warnNoDefaultPlan(context.Background(), e.st, log)
	if buf.Len() != 0 {
		t.Fatalf("warned with a default plan: %q", buf.String())
	}
}
