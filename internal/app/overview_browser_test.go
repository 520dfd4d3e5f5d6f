package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// TestOverviewInChromium: the page a user lands on shows the balance under
// its alert (with the banner on every page), today's and 30 days' messages
// by status and channel, the delivery ratio, the spend against the daily
// alert, and links to the failures and failing webhooks; the operators'
// page ranks accounts by spend and lists those below their alert. Both at
// desktop and phone widths.
func TestOverviewInChromium(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{credits: 40})
	c := newChrome(t, e)
	ctx := context.Background()
	low, daily := int64(35*ledger.Micro), int64(5*ledger.Micro)
	if err := e.st.SetAlerts(ctx, e.account.ID, domain.Alerts{LowBalance: &low, DailySpend: &daily}); err != nil {
		t.Fatal(err)
	}
	if err := e.st.SetAccountWebhook(ctx, e.account.ID, e.hooks.url()); err != nil {
		t.Fatal(err)
	}
	e.hooks.set(func(r *receiver) { r.status = 500 }) // every webhook fails and is retried
	// Yesterday: a few messages; today: delivered ones, one that fails,
	// one to a receiver that refuses its webhooks.
	e.clock.Advance(-24 * time.Hour)
	for i := range 3 {
		send(t, e, e.liveKey, map[string]any{"to": fmt.Sprintf("55119999902%02d", i), "message": "hi", "type": "SMS"})
	}
	e.clock.Advance(24 * time.Hour)
	for i := range 5 {
		send(t, e, e.liveKey, map[string]any{"to": fmt.Sprintf("55119999903%02d", i), "message": "hi", "type": "SMS"})
	}
	failed := send(t, e, e.liveKey, map[string]any{"to": "5511999990001", "message": "hi", "type": "SMS"}).json(t)
	failedID := failed["messages"].([]any)[0].(map[string]any)["messageId"].(string)
	send(t, e, e.liveKey, map[string]any{"to": "5511999990160", "message": "hi", "type": "RCS", "callbackUrl": e.hooks.url()})
	polltest.For(t, "the statuses and the failing webhooks", 15*time.Second, func() bool {
		evs, err := e.st.TroubledEvents(ctx, e.account.ID, 10)
		return err == nil && len(evs) >= 2 && len(e.alertCounts(t, e.account.ID)) == 2
	})

	owner, op := "olivia@acme.example", "otto@msgsvc.example"
	for _, u := range []struct{ account, email, role string }{{e.account.ID, owner, "owner"}, {"", op, "operator"}} {
		if _, _, err := createTestUser(ctx, e.st, u.account, u.email, u.role, testPassword, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	c.login(owner)
	c.wantHeading("after login", "Overview")
	main := c.text("main")
	for _, want := range []string{"Low balance: 31 credits left, below the alert at 35", "Spent today (live)", "of the daily alert at 5: reached",
		"Messages today", "Last 30 days", failedID, "balance.low", "HTTP 500"} {
		if !strings.Contains(main, want) && !strings.Contains(c.text("body"), want) {
			t.Errorf("the overview lacks %q:\n%s", want, main)
		}
	}
	c.shot("overview")
	// The banner stays on the other pages while the balance is low.
	c.open("/settings/keys")
	if !strings.Contains(c.text(".banner"), "Low balance") {
		t.Error("no banner on the keys page")
	}
	// A failure links to its message.
	c.open("/")
	if st := c.press(fmt.Sprintf(`a[href="/messages/%s"]`, failedID)); st != 200 || !strings.Contains(c.text("main"), "INVALID_NUMBER") {
		t.Errorf("the failure's link: %d", st)
	}
	c.open("/?environment=test")
	c.shot("overview-test")

	// Settings → Alerts: the webhook and thresholds, the alerts posted and
	// their redelivery.
	c.open("/settings/alerts")
	if c.value("#lowBalance") != "35" || c.value("#dailySpend") != "5" || c.value("#url") != e.hooks.url() {
		t.Errorf("the alerts form: %q %q %q", c.value("#lowBalance"), c.value("#dailySpend"), c.value("#url"))
	}
	c.fill("#lowBalance", "-3")
	c.fill("#url", "https://hooks.example.com/elsewhere")
	if st := c.press("form[action='/settings/alerts'] button[type=submit]"); st != 400 || !strings.Contains(c.text("main"), "must not be negative") {
		t.Errorf("a negative threshold: %d", st)
	}
	// A refused form changes nothing, the webhook beside the bad threshold included.
	if a, err := e.st.Account(ctx, e.account.ID); err != nil || a.WebhookURL != e.hooks.url() {
		t.Errorf("after a refused form the account webhook is %q (%v), want %q", a.WebhookURL, err, e.hooks.url())
	}
	c.fill("#url", e.hooks.url())
	c.fill("#lowBalance", "25")
	c.fill("#dailySpend", "")
	if st := c.press("form[action='/settings/alerts'] button[type=submit]"); st != 200 || !strings.Contains(c.text(".notice"), "saved") {
		t.Errorf("save the alerts: %d", st)
	}
	if a, err := e.st.Account(ctx, e.account.ID); err != nil || a.Alerts.LowBalance == nil || *a.Alerts.LowBalance != 25*ledger.Micro ||
		a.Alerts.DailySpend != nil {
		t.Errorf("saved alerts: %+v %v", a.Alerts, err)
	}
	if c.eval(`document.querySelector(".banner") !== null`) {
		t.Error("the banner stays after the threshold went below the balance")
	}
	e.hooks.set(func(r *receiver) { r.status = 0 })
	if st := c.press("form[action$='/redeliver'] button"); st != 200 || !strings.Contains(c.text(".notice"), "same webhook-id") {
		t.Errorf("redeliver an alert: %d", st)
	}
	polltest.For(t, "the redelivered alert", 10*time.Second, func() bool { return len(e.alertHooks()) == 1 })
	c.shot("alerts")
	c.logout()

	if err := e.st.SetAlerts(ctx, e.account.ID, domain.Alerts{LowBalance: &low}); err != nil {
		t.Fatal(err)
	}
	c.login(op)
	c.open("/operator")
	if top := c.text("#top-table tbody"); !strings.Contains(top, "Acme\t10\t9\t31") {
		t.Errorf("top accounts: %q", top)
	}
	if below := c.text("#low-table tbody"); !strings.Contains(below, "Acme\t31\t35") {
		t.Errorf("accounts below their alert: %q", below)
	}
	c.shot("operator-overview")
}
