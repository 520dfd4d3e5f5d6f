package app

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The pricing console in Chromium: an operator makes a plan that sells
// below a rate card's cost and is warned, fixes it, onboards an account
// on it and moves another; the rate cards and margins pages show the
// providers' costs and the margin with its percentage and totals; a
// customer reads its prices; and a role below the operator reaches none
// of the console, in the browser or by posting its forms.
func TestPricePlansInChromium(t *testing.T) {
	e, _ := startMoneyNode(t, "sqlite")
	// Three days of traffic, one of them at a loss (the loss route pays 5
	// for a 2-credit message), for the margins by day.
	for i, to := range []string{"46700000011", "46704000011", "46701000011"} {
		e.clock.Advance(time.Duration(i-2) * 24 * time.Hour)
		sendOne(t, e, to)
		e.clock.Advance(time.Duration(2-i) * 24 * time.Hour)
	}
	c := newChrome(t, e)
	c.login(e.user("operator"))

	// No plan yet: the page says what new accounts sell at.
	c.open("/operator/plans")
	c.wantHeading("plans page", "Price plans")
	if !strings.Contains(c.text(".banner"), "No price plan yet") {
		t.Fatalf("no warning without plans: %q", c.text(".banner"))
	}
	c.fill("#name", "Standard")
	c.do("tick default", chromedp.Click(chromedp.CSS("#default")))
	c.fill("#home\\.smsSegment", "0.05")
	c.fill("#abroad\\.smsSegment", "0.02")
	c.sendForm("/operator/plans", "create a plan", "Price plan created.")
	c.wantHeading("the new plan", "Price plan Standard")
	warning := c.text("#below-cost")
	if !strings.Contains(warning, "sells below cost") || !strings.Contains(c.text("#below-table"), "dear") {
		t.Fatalf("no below-cost warning: %q", warning)
	}
	c.shot("panel-plans")
	planPath := strings.TrimPrefix(c.eval2("location.pathname"), "")
	planID := strings.TrimPrefix(planPath, "/operator/plans/")

	// Sweden at 6 credits a segment covers every card: the warning goes.
	c.fill("#c0\\.code", "46")
	c.fill("#c0\\.smsSegment", "6")
	c.sendForm("/operator/plans/"+planID, "edit the plan", "Price plan saved")
	if c.eval("document.getElementById('below-cost') !== null") {
		t.Fatalf("still warned: %q", c.text("#below-cost"))
	}
	if c.value("#c0\\.code") != "46" || c.value("#c0\\.smsSegment") != "6" || c.value("#home\\.smsSegment") != "0.05" {
		t.Fatalf("the saved form: %q %q", c.value("#c0\\.code"), c.value("#c0\\.smsSegment"))
	}
	// A bad rate is refused, naming its input, and nothing changes.
	c.fill("#home\\.smsSegment", "cheap")
	if st := c.press("form[action='/operator/plans/" + planID + "'] button"); st != 400 {
		t.Fatalf("a bad rate: %d", st)
	}
	if !c.eval(`document.getElementById('home.smsSegment').getAttribute('aria-invalid') === 'true'`) {
		t.Fatal("the bad rate is not marked")
	}

	// Onboarding: the form starts on the default plan; the account's page follows.
	c.open("/operator")
	c.do("follow New account", chromedp.Click(chromedp.CSS("#new-account-link")))
	c.wantHeading("new account form", "New account")
	if c.value("#plan") != planID {
		t.Fatalf("the form does not start on the default plan: %q", c.value("#plan"))
	}
	c.fill("#name", "Nordic Shop")
	c.fill("#country", "46")
	c.fill("#currency", "SEK")
	c.shot("panel-new-account")
	c.sendForm("/operator/accounts", "create an account", "Account created")
	acctID := c.eval2("new URLSearchParams(location.search).get('account')")
	op := e.member("operator")
	if a := e.mg("GET", "/api/v1/manage/accounts/"+acctID, op, nil).json(t); a["pricePlan"] != planID || a["currency"] != "SEK" {
		t.Fatalf("the new account: %v", a)
	}
	// Its Prices page, where an operator moves it off the plan and back.
	c.open("/prices?account=" + acctID)
	if got := c.text("#prices-table"); !strings.Contains(got, "+46 SE") || !strings.Contains(got, "6") {
		t.Fatalf("the new account's prices: %q", got)
	}
	c.do("choose no plan", chromedp.SetValue(chromedp.CSS("#plan"), ""))
	c.sendForm("/prices/plan", "take it off the plan", "price plan is changed")
	if a := e.mg("GET", "/api/v1/manage/accounts/"+acctID, op, nil).json(t); a["pricePlan"] != nil {
		t.Fatalf("still on the plan: %v", a)
	}

	// Rate cards and margins.
	c.open("/operator/rate-cards")
	if got := c.text("main"); !strings.Contains(got, "dear") || !strings.Contains(got, "46703") || !strings.Contains(got, "+46 SE") {
		t.Fatalf("rate cards: %q", got)
	}
	c.shot("panel-ratecards")
	c.open("/operator/rate-cards?prefix=467")
	if got := c.text("main"); strings.Contains(got, "0.01") || !strings.Contains(got, "46704") {
		t.Fatalf("filtered rate cards: %q", got)
	}
	c.open("/operator/margins")
	total := c.text("#margins-total")
	if !strings.Contains(total, "Total") || !strings.Contains(total, "%") || !c.eval("document.querySelectorAll('#chart-margin svg rect.bar').length === 3") ||
		!strings.Contains(c.text("#margins-table"), "loss") {
		t.Fatalf("margins by day: %q", total)
	}
	c.shot("panel-margins")
	c.open("/operator/margins?groupBy=provider")
	if got := c.text("#margins-table"); !strings.Contains(got, "cheap") || !strings.Contains(got, "dear") || !strings.Contains(got, "loss") {
		t.Fatalf("margins by provider: %q", got)
	}
	c.open("/operator/margins?groupBy=country")
	if got := c.text("#margins-table"); !strings.Contains(got, "+46 SE") {
		t.Fatalf("margins by country: %q", got)
	}

	// A customer reads its prices: Acme on the plan, with an override.
	if r := e.mg("PUT", "/api/v1/manage/accounts/"+e.account.ID+"/price-plan", op, map[string]any{"planId": planID}); r.status != 200 {
		t.Fatalf("plan Acme: %d %s", r.status, r.body)
	}
	if r := e.mg("PUT", "/api/v1/manage/accounts/"+e.account.ID, op, map[string]any{"prices": map[string]any{
		"countries": map[string]any{"44": map[string]any{"smsSegment": 0.04}}}}); r.status != 200 {
		t.Fatalf("override: %d %s", r.status, r.body)
	}
	c.logout()
	c.login(e.user("viewer"))
	c.open("/prices")
	c.wantHeading("the customer's prices", "Prices")
	if got := c.text("main"); !strings.Contains(got, "Standard") || !strings.Contains(c.text("#prices-table"), "0.04 own") ||
		c.eval("document.querySelector(\"form[action='/prices/plan']\") !== null") {
		t.Fatalf("the customer's prices page: %q", got)
	}
	c.shot("panel-prices")
	for _, path := range []string{"/operator/plans", "/operator/plans/" + planID, "/operator/accounts/new", "/operator/rate-cards", "/operator/margins"} {
		c.open(path)
		c.wantHeading("a viewer on "+path, "Not allowed")
	}

	// Posting the console's forms below the operator changes nothing.
	for _, role := range []string{"owner", "admin"} {
		b := e.browser()
		b.login(e.user(role))
		tok := b.csrf("/")
		for path, form := range map[string]url.Values{
			"/operator/plans":           {"name": {"Mine"}, "home.smsSegment": {"0"}},
			"/operator/plans/" + planID: {"name": {"Mine"}, "home.smsSegment": {"0"}},
			"/operator/accounts":        {"name": {"Sneaky"}, "country": {"55"}},
			"/prices/plan":              {"account": {e.account.ID}, "plan": {""}},
		} {
			form.Set("csrf", tok)
			if p := b.post(path, form); p.status != 403 {
				t.Fatalf("%s posting %s: %d", role, path, p.status)
			}
		}
	}
	plans := e.mg("GET", "/api/v1/manage/price-plans", op, nil).json(t)["plans"].([]any)
	if len(plans) != 1 || plans[0].(map[string]any)["name"] != "Standard" {
		t.Fatalf("plans after the refusals: %v", plans)
	}
	if a := e.mg("GET", "/api/v1/manage/accounts/"+e.account.ID, op, nil).json(t); a["pricePlan"] != planID {
		t.Fatalf("Acme after the refusals: %v", a)
	}
	if list := e.mg("GET", "/api/v1/manage/accounts", op, nil).json(t)["accounts"].([]any); len(list) != 2 {
		t.Fatalf("accounts after the refusals: %d", len(list))
	}
}

// eval2 evaluates a JavaScript expression that yields a string.
func (c *chrome) eval2(expr string) string {
	c.t.Helper()
	return result(c, "evaluate "+expr, chromedp.Evaluate[string](expr))
}
