package app

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// The operators' fraud page: held messages to release or reject, and the
// guard's decisions by hour as a chart.

// startHour moves the clock to one second past the next whole hour: the
// guard counts by UTC hour of this clock, and a test whose sends
// straddled the turn of an hour would count them in two.
func (c *clock) startHour() {
	now := c.Now()
	c.Advance(now.Truncate(time.Hour).Add(time.Hour + time.Second).Sub(now))
}

// operatorToken logs an operator into the management API.
func (e *env) operatorToken(email string) string {
	e.t.Helper()
	r := e.do("POST", "/api/v1/auth/login", "", map[string]string{"email": email, "password": testPassword})
	if r.status != 200 {
		e.t.Fatalf("operator login: %d %s", r.status, r.body)
	}
	return r.json(e.t)["token"].(string)
}

// setFraudRules sets an account's rules as an operator does.
func (e *env) setFraudRules(token, accountID string, rules map[string]any) {
	e.t.Helper()
	r := e.do("PUT", "/api/v1/manage/fraud?account="+accountID, "", rules, "Authorization", "Bearer "+token)
	if r.status != 200 {
		e.t.Fatalf("set the fraud rules of %s: %d %s", accountID, r.status, r.body)
	}
}

// fraudScene makes traffic that trips the rules of two accounts: Acme's
// sends to one range beyond its cap are held, and a second account's
// repeated sends to one number beyond its cap are blocked. It returns the
// held messages' ids, oldest first, and the second account.
func fraudScene(t *testing.T, e *env, operator string) ([]string, domain.Account) {
	t.Helper()
	ctx := context.Background()
	e.clock.startHour()
	other := e.addAccount(NewAccount{Name: "Tandem", Tier: "basic", Credits: 50, Currency: "EUR", Country: "49"})
	otherKey, _ := e.addKey(other.ID, "live")
	token := e.operatorToken(operator)
	e.setFraudRules(token, e.account.ID, map[string]any{"perRangeHourly": 3, "action": "hold"})
	e.setFraudRules(token, other.ID, map[string]any{"perRecipientHourly": 2, "action": "block"})
	var held []string
	for i := range 6 {
		r := send(t, e, e.liveKey, map[string]any{"to": fmt.Sprintf("5511999990%03d", 110+i), "message": fmt.Sprintf("Code %d", 4820+i), "type": "SMS"})
		if r.status != 202 {
			t.Fatalf("send %d: %d %s", i, r.status, r.body)
		}
		m := r.json(t)["messages"].([]any)[0].(map[string]any)
		if i >= 3 {
			held = append(held, m["messageId"].(string))
		}
	}
	for range 4 {
		if r := send(t, e, otherKey.Secret, map[string]any{"to": "4917012345678", "message": "Dein Code", "type": "SMS"}); r.status != 202 {
			t.Fatalf("a send of the second account: %d %s", r.status, r.body)
		}
	}
	for _, id := range held {
		m, err := e.st.MessageByID(ctx, id)
		if err != nil || m.Status != domain.Held || m.Fraud == nil || m.Fraud.Rule != domain.RulePerRange {
			t.Fatalf("message %s over the range's cap: %+v %v", id, m, err)
		}
	}
	return held, other
}

// TestFraudPanelInChromium: an operator sees the held messages with the
// rule and its figures, releases one (it goes out, charged) and rejects
// one (it fails FRAUD_SUSPECTED, refunded), and sees the decisions as a
// chart by rule and by account; at desktop and phone widths.
func TestFraudPanelInChromium(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	c := newChrome(t, e)
	ctx := context.Background()
	op := e.user("operator")
	held, _ := fraudScene(t, e, op)
	before, err := e.st.Account(ctx, e.account.ID)
	if err != nil {
		t.Fatal(err)
	}

	c.login(op)
	c.open("/operator/fraud")
	c.wantHeading("the fraud page", "Fraud guard")
	listed := func(id string) bool { return c.eval(fmt.Sprintf(`document.getElementById("held-%s") !== null`, id)) }
	for _, id := range held {
		if !listed(id) {
			t.Errorf("held message %s is not listed", id)
		}
	}
	rows := c.text("#held-table tbody")
	for _, want := range []string{"Per range: message 4 to +5511999990xxx this hour, over the cap of 3", "+5511999990113", "Acme", "Code 4823"} {
		if !strings.Contains(rows, want) {
			t.Errorf("the held list lacks %q:\n%s", want, rows)
		}
	}
	if !c.eval(`document.querySelectorAll("#chart-fraud svg rect.bar").length >= 2`) {
		t.Error("the chart has no bars for the two rules")
	}
	legend := c.text("#chart-fraud .legend")
	for _, want := range []string{"Per recipient: 2", "Per range: 3", "Burst: 0"} {
		if !strings.Contains(legend, want) {
			t.Errorf("the legend lacks %q: %q", want, legend)
		}
	}
	if top := c.text("#fraud-top tbody"); !strings.Contains(top, "Tandem") || !strings.Contains(top, "+4917012345xxx") || !strings.Contains(top, "block") {
		t.Errorf("the busiest keys: %q", top)
	}
	c.shot("panel-fraud")

	// Release the first, reject the second.
	if st := c.press(fmt.Sprintf(`button[aria-label="Release message %s"]`, held[0])); st != 200 {
		t.Fatalf("release: %d", st)
	}
	c.wantNotice("after releasing", "released")
	if st := c.press(fmt.Sprintf(`button[aria-label="Reject message %s"]`, held[1])); st != 200 {
		t.Fatalf("reject: %d", st)
	}
	c.wantNotice("after rejecting", "rejected")
	polltest.For(t, "the released message delivered", 10*time.Second, func() bool {
		m, err := e.st.MessageByID(ctx, held[0])
		return err == nil && m.Status == domain.Delivered
	})
	released, _ := e.st.MessageByID(ctx, held[0])
	rejected, err := e.st.MessageByID(ctx, held[1])
	if err != nil || rejected.Status != domain.Failed || rejected.ErrorCode != domain.CodeFraudSuspected ||
		rejected.Fraud == nil || rejected.Fraud.Resolution != domain.HoldRejected || rejected.Fraud.ResolvedBy != op {
		t.Fatalf("the rejected message: %+v %v", rejected, err)
	}
	if released.Fraud == nil || released.Fraud.Resolution != domain.HoldReleased || released.Charged == 0 {
		t.Fatalf("the released message: %+v", released)
	}
	after, err := e.st.Account(ctx, e.account.ID)
	if err != nil || after.Balance != before.Balance+rejected.Credits {
		t.Fatalf("balance %d after the rejection, want %d back on %d (%v)", after.Balance, rejected.Credits, before.Balance, err)
	}
	if listed(held[0]) || listed(held[1]) || !listed(held[2]) {
		t.Fatalf("the held list after deciding two: %q", c.text("#held-table tbody"))
	}
	// The same message again, from a page shown before: it is not held any more.
	c.open("/operator/fraud")
	c.do("point a form at the released message", chromedp.SetAttributeValue(
		chromedp.CSS(fmt.Sprintf(`form[action="/operator/fraud/held/%s/reject"]`, held[2])), "action", "/operator/fraud/held/"+held[0]+"/reject"))
	if st := c.press(fmt.Sprintf(`button[aria-label="Reject message %s"]`, held[2])); st != 409 || !strings.Contains(c.text("main"), "no longer held") {
		t.Fatalf("rejecting a released message: %d %q", st, c.text("main"))
	}
	if m, _ := e.st.MessageByID(ctx, held[0]); m.Status != domain.Delivered {
		t.Fatalf("the refused rejection changed the released message: %s", m.Status)
	}

	c.open("/operator/fraud?by=account")
	if legend := c.text("#chart-fraud .legend"); !strings.Contains(legend, "Acme") || !strings.Contains(legend, "Tandem: 2") {
		t.Errorf("the chart by account: %q", legend)
	}
	c.open("/operator/fraud?by=key&days=7")
	if legend := c.text("#chart-fraud .legend"); !strings.Contains(legend, "+5511999990xxx: 3") || !strings.Contains(legend, "+4917012345xxx: 2") {
		t.Errorf("the chart by range over a week: %q", legend)
	}
	c.shot("panel-fraud-by-range")
}

// TestFraudPanelOperatorsOnly: an account's owner and admin get 403 on the
// fraud page and its forms (with a valid form token of their own), and
// nothing changes; someone signed out is sent to the login page.
func TestFraudPanelOperatorsOnly(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	ctx := context.Background()
	held, _ := fraudScene(t, e, e.user("operator"))
	balance := func() int64 {
		a, err := e.st.Account(ctx, e.account.ID)
		if err != nil {
			t.Fatal(err)
		}
		return a.Balance
	}
	before := balance()
	for _, role := range []string{"owner", "admin"} {
		b := e.browser()
		b.login(e.user(role))
		if p := b.get("/operator/fraud"); p.status != 403 || strings.Contains(p.body, held[0]) || strings.Contains(p.body, "Tandem") {
			t.Errorf("%s on the fraud page: %d", role, p.status)
		}
		token := b.csrf("/settings/keys")
		for _, act := range []string{"release", "reject"} {
			p := b.post("/operator/fraud/held/"+held[0]+"/"+act, url.Values{"csrf": {token}})
			if p.status != 403 {
				t.Errorf("%s: %s a held message: %d", role, act, p.status)
			}
		}
		if p := b.get("/operator/fraud?account=" + e.account.ID); p.status != 403 {
			t.Errorf("%s on the fraud page of its own account: %d", role, p.status)
		}
	}
	anon := e.browser()
	if p := anon.get("/operator/fraud"); p.status != 303 || !strings.HasPrefix(p.header.Get("Location"), "/login") {
		t.Errorf("signed out: %d %s", p.status, p.header.Get("Location"))
	}
	if p := anon.post("/operator/fraud/held/"+held[0]+"/release", url.Values{"csrf": {"x"}}); p.status != 303 {
		t.Errorf("signed out, releasing: %d", p.status)
	}
	for _, id := range held {
		if m, err := e.st.MessageByID(ctx, id); err != nil || m.Status != domain.Held || m.Fraud.Resolution != "" {
			t.Fatalf("message %s after the refused forms: %+v %v", id, m, err)
		}
	}
	if got := balance(); got != before {
		t.Fatalf("balance %d after the refused forms, was %d", got, before)
	}
	// An operator's form without its token changes nothing either.
	op := e.browser()
	op.login(e.user("operator"))
	if p := op.post("/operator/fraud/held/"+held[0]+"/release", url.Values{"csrf": {strings.Repeat("0", 32)}}); p.status != 403 {
		t.Errorf("an operator's forged release: %d", p.status)
	}
	if m, _ := e.st.MessageByID(ctx, held[0]); m.Status != domain.Held {
		t.Fatalf("the forged release released: %s", m.Status)
	}
	if p := op.get("/operator/fraud"); p.status != 200 || !strings.Contains(p.body, held[0]) {
		t.Fatalf("an operator on the fraud page: %d", p.status)
	}
}
