package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// printMedia shows the page as it prints (print true) or as on screen.
func (c *chrome) printMedia(print bool) {
	c.t.Helper()
	media := ""
	if print {
		media = "print"
	}
	c.do("emulate media "+media, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: media})
		return err
	}))
}

// TestConsoleInChromium: an owner reads this month's statement from the
// balance page, as a page that adds up to the balance and prints without
// the panel's navigation; a developer is refused it; an operator searches
// every account's messages and sees whose each one is.
func TestConsoleInChromium(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	c := newChrome(t, e)
	ctx := context.Background()
	other := e.addAccount(NewAccount{Name: "Globex", Tier: "pro", Credits: 50, Currency: "USD", Country: "44"})
	otherKey, _ := e.addKey(other.ID, "live")
	var ids []string
	for _, s := range []struct{ key, to, text string }{
		{e.liveKey, "5511999990201", "hello"}, {e.liveKey, "5511999990202", strings.Repeat("two segments ", 14)},
		{e.liveKey, "447911123456", "abroad"}, {e.liveKey, "5511999990001", "refused by the network, refunded"},
		{otherKey.Secret, "447911123457", "globex's"},
	} {
		r := send(t, e, s.key, map[string]any{"to": s.to, "message": s.text, "type": "SMS"})
		if r.status != 202 {
			t.Fatalf("send: %d %s", r.status, r.body)
		}
		ids = append(ids, r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string))
	}
	polltest.Until(t, "the refusal's refund", func() bool {
		m, err := e.st.MessageByID(ctx, ids[3])
		return err == nil && m.Status == "FAILED"
	})

	owner, dev, op := "olga@acme.example", "dmitri@acme.example", "otto@msgsvc.example"
	for _, u := range []struct{ account, email, role string }{{e.account.ID, owner, "owner"}, {e.account.ID, dev, "developer"}, {"", op, "operator"}} {
		if _, _, err := createTestUser(ctx, e.st, u.account, u.email, u.role, testPassword, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	month := e.clock.Now().UTC().Format("2006-01")
	c.login(owner)
	c.open("/balance")
	if st := c.press(`a[href="/statements"]`); st != 200 {
		t.Fatalf("the balance page's link to statements: %d", st)
	}
	c.wantHeading("the statement", "Statement "+e.clock.Now().UTC().Format("January 2006"))
	acct, err := e.st.Account(ctx, e.account.ID)
	if err != nil {
		t.Fatal(err)
	}
	closing := c.text(".statement-summary tr.total td")
	if closing != fmt.Sprint(ledger.Credits(acct.Balance)) {
		t.Errorf("closing balance %q, the account's balance %v", closing, ledger.Credits(acct.Balance))
	}
	charges := c.text(".statement-charges tbody")
	for _, want := range []string{"SMS\t+55\t3\t4\t4", "SMS\t+44\t1\t1\t2"} {
		if !strings.Contains(charges, want) {
			t.Errorf("charges lack %q:\n%s", want, charges)
		}
	}
	if got := c.text(".statement-summary"); !strings.Contains(got, "Refunds\t+1") || !strings.Contains(got, "Top-ups") {
		t.Errorf("the summary:\n%s", got)
	}
	if href := result(c, "csv link", chromedp.AttributeValue(chromedp.CSS(`a[download]`), "href")).Value; href != "/statements/"+month+"?format=csv" {
		t.Errorf("csv link %q", href)
	}
	if !c.eval(`document.querySelector("#month option[selected]").value === "` + month + `"`) {
		t.Error("the month picker does not show the month")
	}
	c.shot("panel-statement")
	// On paper: no header, no tabs, no tools; the tables stay.
	c.printMedia(true)
	for sel, want := range map[string]string{"header.top": "none", "nav.tabs": "none", ".statement-tools": "none", ".statement-charges": "table"} {
		if !c.eval(fmt.Sprintf(`getComputedStyle(document.querySelector(%q)).display === %q`, sel, want)) {
			t.Errorf("printed, %s is not display %s", sel, want)
		}
	}
	png := result(c, "the printed statement", chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(c.shots, "panel-statement-print-desktop.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	c.printMedia(false)
	c.open("/statements/2026-13")
	c.wantHeading("a month that is none", "No such statement")
	c.logout()

	// A developer has the balance page, not statements.
	c.login(dev)
	c.open("/balance")
	if c.eval(`document.querySelector('a[href="/statements"]') !== null`) {
		t.Error("a developer is offered statements")
	}
	c.open("/statements/" + month)
	c.wantHeading("a developer's statement", "Not allowed")
	c.logout()

	// The operator's search across accounts.
	c.login(op)
	c.open("/messages")
	c.wantHeading("the operator's messages", "Messages of every account")
	rows := c.text(".search-results tbody")
	for _, want := range []string{"Acme", "Globex", ids[0], ids[4]} {
		if !strings.Contains(rows, want) {
			t.Errorf("the search across accounts lacks %q:\n%s", want, rows)
		}
	}
	c.shot("panel-search")
	c.fill("#to", "447911123457")
	if st := c.press("form[role=search] button"); st != 200 {
		t.Fatalf("search by phone: %d", st)
	}
	if rows := c.text(".search-results tbody"); !strings.Contains(rows, "Globex") || strings.Contains(rows, "Acme") || !strings.Contains(rows, ids[4]) {
		t.Errorf("by phone:\n%s", rows)
	}
	if st := c.press(fmt.Sprintf(`a[href="/messages/%s?account=%s"]`, ids[4], other.ID)); st != 200 || !strings.Contains(c.text("main"), ids[4]) {
		t.Errorf("the message's page from the search: %d", st)
	}
	c.open("/statements?account=" + other.ID)
	c.wantHeading("the operator's statement of an account", "Statement "+e.clock.Now().UTC().Format("January 2006"))
}
