package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// End-to-end tests of the web panel in headless Chromium, driven from Go.
// They need a Chromium binary: MSGSVC_TEST_CHROMIUM=/usr/bin/chromium
// (Debian's chromium package). Screenshots of every page, at desktop and
// phone widths, go to MSGSVC_TEST_SCREENSHOTS (default: a temporary
// directory, named in the test log).

const chromiumEnv = "MSGSVC_TEST_CHROMIUM"

// chrome is one browser tab on a running node.
type chrome struct {
	t     *testing.T
	e     *env
	ctx   context.Context
	shots string
}

func newChrome(t *testing.T, e *env) *chrome {
	t.Helper()
	path := os.Getenv(chromiumEnv)
	if path == "" {
		t.Skipf("browser tests skipped: set %s to a Chromium binary (e.g. /usr/bin/chromium from Debian's chromium package)", chromiumEnv)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 800),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first run starts the browser; it must not carry a deadline.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	shots := os.Getenv("MSGSVC_TEST_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", shots)
	return &chrome{t: t, e: e, ctx: ctx, shots: shots}
}

// step bounds one browser action: a page that never comes fails the test
// instead of hanging it.
func (c *chrome) step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.ctx, 30*time.Second)
}

func (c *chrome) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	ctx, cancel := c.step()
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		c.t.Fatalf("%s: %v", what, err)
	}
}

func (c *chrome) open(path string) {
	c.t.Helper()
	c.do("open "+path, chromedp.Navigate(c.e.base+path))
}

func (c *chrome) fill(sel, value string) {
	c.t.Helper()
	if value == "" {
		c.do("clear "+sel, chromedp.Clear(chromedp.CSS(sel)))
		return
	}
	c.do("fill "+sel, chromedp.SetValue(chromedp.CSS(sel), value))
}

// sendForm presses the button of the form that posts to action and checks
// that the page that answers says want in its notice; what names the step.
func (c *chrome) sendForm(action, what, want string) {
	c.t.Helper()
	c.press("form[action='" + action + "'] button")
	c.wantNotice(what, want)
}

// wantHeading fails the test unless the page's heading is want; what
// names the page.
func (c *chrome) wantHeading(what, want string) {
	c.t.Helper()
	if got := c.text("h1"); got != want {
		c.t.Fatalf("%s: heading %q, want %q", what, got, want)
	}
}

// wantNotice fails the test unless the page's notice says want; what
// names the step that should have shown it.
func (c *chrome) wantNotice(what, want string) {
	c.t.Helper()
	if n := c.text(".notice"); !strings.Contains(n, want) {
		c.t.Fatalf("%s: %q", what, n)
	}
}

// press clicks a button that sends a form and waits for the page that
// answers; it returns that page's status.
func (c *chrome) press(sel string) int64 {
	c.t.Helper()
	ctx, cancel := c.step()
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel)))
	if err != nil {
		c.t.Fatalf("press %s: %v", sel, err)
	}
	return resp.Status
}

func (c *chrome) text(sel string) string {
	c.t.Helper()
	return strings.TrimSpace(result(c, "text of "+sel, chromedp.Text(chromedp.CSS(sel))))
}

func (c *chrome) value(sel string) string {
	c.t.Helper()
	return result(c, "value of "+sel, chromedp.Value(chromedp.CSS(sel)))
}

func (c *chrome) eval(expr string) bool {
	c.t.Helper()
	return result(c, "evaluate "+expr, chromedp.Evaluate[bool](expr))
}

// result runs one browser action that yields a value (a method cannot
// take the value's type); what names the action when it fails.
func result[T any](c *chrome, what string, a chromedp.Action[T]) T {
	c.t.Helper()
	ctx, cancel := c.step()
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		c.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// shot saves the whole page at desktop (1280) and phone (390) widths, and
// checks that at either width nothing spills out of the page sideways.
func (c *chrome) shot(name string) {
	c.t.Helper()
	for _, size := range []struct {
		label string
		width int64
	}{{"desktop", 1280}, {"phone", 390}} {
		ctx, cancel := c.step()
		err := chromedp.Do(ctx, chromedp.EmulateViewport(size.width, 800))
		var height float64
		if err == nil {
			height, err = chromedp.Run(ctx, chromedp.Evaluate[float64]("document.documentElement.scrollHeight"))
		}
		if err == nil {
			err = chromedp.Do(ctx, chromedp.EmulateViewport(size.width, int64(height)))
		}
		var png []byte
		if err == nil {
			png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
		}
		cancel()
		if err != nil {
			c.t.Fatalf("screenshot %s %s: %v", name, size.label, err)
		}
		if err := os.WriteFile(filepath.Join(c.shots, fmt.Sprintf("%s-%s.png", name, size.label)), png, 0o644); err != nil {
			c.t.Fatal(err)
		}
		if c.eval("document.documentElement.scrollWidth > window.innerWidth") {
			c.t.Errorf("%s at %d px: the page is wider than the screen", name, size.width)
		}
	}
	c.do("restore the viewport", chromedp.EmulateViewport(1280, 800))
}

// login signs in with the login form.
func (c *chrome) login(email string) {
	c.t.Helper()
	c.open("/login")
	c.fill("#email", email)
	c.fill("#password", testPassword)
	if st := c.press("form button[type=submit]"); st != 200 {
		c.t.Fatalf("login as %s: %d", email, st)
	}
}

func (c *chrome) logout() {
	c.t.Helper()
	c.press("header form[action='/logout'] button")
}

// TestPanelInChromium walks an owner and an operator through the panel's
// tasks and checks each against the API: a generated key works, a revoked
// one is refused, an allow-list refuses, an approved limit increase applies
// at once, and a redelivered webhook arrives again with the same id.
func TestPanelInChromium(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	c := newChrome(t, e)
	backfillUsage(t, e)
	old := e.clock.Now().Add(-120 * 24 * time.Hour)
	_, legacy, err := console(e.st, old).CreateKey(context.Background(), manage.Console, e.account.ID, "live", "legacy backend")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.TouchKey(context.Background(), legacy.ID, e.clock.Now().Add(-3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	owner, op, viewer := "ana@acme.example", "ops@msgsvc.example", "vic@acme.example"
	for _, u := range []struct{ account, email, role string }{{e.account.ID, owner, "owner"}, {"", op, "operator"},
		{e.account.ID, viewer, "viewer"}} {
		if _, _, err := createTestUser(context.Background(), e.st, u.account, u.email, u.role, testPassword, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}

	c.open("/login?note=expired")
	c.shot("login")
	c.login(owner)
	c.wantHeading("after login", "Overview")
	c.open("/settings/keys")
	browserKeys(t, c)
	browserSecurity(t, c)
	browserSenders(t, c)
	browserSMPP(t, c)
	browserMessages(t, c)
	browserCompliance(t, c)
	c.open("/balance")
	if !c.eval(`document.querySelectorAll("svg rect.bar").length > 0`) {
		t.Error("the usage chart has no bars")
	}
	c.shot("balance")
	c.open("/account")
	c.shot("account")
	c.open("/settings/users")
	c.fill("#email", "dev@acme.example")
	c.fill("#role", "developer")
	if st := c.press("form[action='/settings/users'] button[type=submit]"); st != 201 {
		t.Fatalf("add a user: %d", st)
	}
	if pw := c.value("#new-password"); len(pw) < 20 {
		t.Fatalf("the new user's password: %q", pw)
	}
	c.shot("users")
	c.open("/messages/msg_nope")
	c.shot("not-found")
	c.open("/settings/nope")
	c.wantHeading("an unknown page", "Page not found")
	c.shot("page-not-found")
	browserDocs(t, c)
	id := browserRequestLimits(t, c)
	c.logout()
	c.login(op)
	browserOperator(t, c, id)
	c.logout()
	c.login(viewer)
	if strings.Contains(c.text("main"), "Generate key") {
		t.Error("a viewer is offered to generate keys")
	}
	c.shot("keys-viewer")
	c.open("/operator")
	c.wantHeading("a viewer on the operator page", "Not allowed")
	c.shot("forbidden")
}

// backfillUsage sends live messages over the past two weeks, so that the
// balance page has a chart to show.
func backfillUsage(t *testing.T, e *env) {
	t.Helper()
	for day := 13; day >= 0; day-- {
		e.clock.Advance(-time.Duration(day) * 24 * time.Hour)
		for i := 0; i < 1+(day*7)%5; i++ {
			send(t, e, e.liveKey, map[string]any{"to": fmt.Sprintf("55119999901%02d", i), "message": "hi", "type": "SMS"})
		}
		if day%3 == 0 {
			send(t, e, e.liveKey, map[string]any{"to": "5511999990150", "message": "hi", "type": "RCS"})
		}
		if day%4 == 1 {
			send(t, e, e.liveKey, map[string]any{"to": "5511999990151", "type": "WHATSAPP", "template": map[string]any{"name": "a", "language": "en"}})
		}
		e.clock.Advance(time.Duration(day) * 24 * time.Hour)
	}
}

func browserKeys(t *testing.T, c *chrome) {
	c.fill("#key-env", "test")
	c.fill("#key-name", "browser test")
	if st := c.press("form[action='/settings/keys'] button[type=submit]"); st != 201 {
		t.Fatalf("generate: %d", st)
	}
	key := c.value("#new-key-value")
	if !strings.HasPrefix(key, "svc_test_") || len(key) != 49 {
		t.Fatalf("the new key shown: %q", key)
	}
	if !c.eval(`!document.querySelector("button.copy").hidden`) {
		t.Error("the copy button did not appear: the script did not run")
	}
	c.shot("keys-new")
	if r := c.e.do("GET", "/api/v1/integration/balance", key, nil); r.status != 200 {
		t.Fatalf("the generated key on the API: %d %s", r.status, r.body)
	}
	c.open("/settings/keys")
	if strings.Contains(c.text("main"), key) {
		t.Fatal("the key is shown again after its page")
	}
	if !strings.Contains(c.text("main"), "over 90 days old") {
		t.Error("the 120-day-old key has no age warning")
	}
	c.shot("keys")
	if st := c.press(fmt.Sprintf(`button[aria-label="Revoke key %s…"]`, key[:13])); st != 200 {
		t.Fatalf("revoke: %d", st)
	}
	c.wantNotice("after revoking", "revoked")
	wantProblem(t, "the revoked key's next request", c.e.do("GET", "/api/v1/integration/balance", key, nil), 401, "INVALID_API_KEY")
}

func browserSecurity(t *testing.T, c *chrome) {
	c.open("/settings/security")
	c.fill("#entries", "203.0.113.7\n2001:db8::/32")
	c.sendForm("/settings/security/allowlist", "after saving the allow-list", "allow-list was saved")
	wantProblem(t, "a request from outside the allow-list", c.e.do("GET", "/api/v1/integration/balance", c.e.testKey, nil), 403, "IP_NOT_ALLOWED")
	c.fill("#entries", "203.0.113.7\n300.1.2.3")
	if st := c.press("form[action='/settings/security/allowlist'] button"); st != 400 {
		t.Fatalf("an invalid entry: %d", st)
	}
	if msg := c.text("#err-entries"); !strings.Contains(msg, "300.1.2.3") {
		t.Fatalf("the invalid entry is not named: %q", msg)
	}
	c.shot("security-invalid")
	c.fill("#entries", "")
	c.press("form[action='/settings/security/allowlist'] button")
	if r := c.e.do("GET", "/api/v1/integration/balance", c.e.testKey, nil); r.status != 200 {
		t.Fatalf("after lifting the allow-list: %d", r.status)
	}
	c.press("form[action='/settings/security/secret/reveal'] button")
	if got := c.value("#secret-value"); got != c.e.account.WebhookSecret {
		t.Fatalf("revealed %q", got)
	}
	c.shot("security")
}

func browserSenders(t *testing.T, c *chrome) {
	c.open("/settings/senders")
	c.fill("#channel", "SMS")
	c.fill("#value", "MyShop")
	c.do("tick default", chromedp.Click(chromedp.CSS("#default")))
	c.press("form[action='/settings/senders'] button[type=submit]")
	if n := c.text(".notice"); !strings.Contains(n, "requested") && !strings.Contains(n, "approved") {
		t.Fatalf("after asking for a sender: %q", n)
	}
	c.shot("senders")
}

// Settings → SMPP: a developer creates an SMPP user and sees its recent
// refusals. This node runs no SMPP listener, so the refusal is kept the way
// the SMPP server keeps one.
func browserSMPP(t *testing.T, c *chrome) {
	e := c.e
	c.open("/settings/smpp")
	c.fill("#smpp-env", "test")
	c.fill("#smpp-sys", "shop1")
	c.press("form[action='/settings/smpp'] button[type=submit]")
	if pw := c.value("#new-smpp-password"); pw == "" {
		t.Fatal("no password shown for the new SMPP user")
	}
	ctx := context.Background()
	users, err := e.st.SMPPUsers(ctx, e.account.ID)
	if err != nil || len(users) != 1 {
		t.Fatalf("SMPP users %v %v", users, err)
	}
	now := e.clock.Now().UTC()
	if err := e.st.RecordSMPPRefusal(ctx, domain.SMPPRefusal{ID: id.New(id.SMPPRefusal, now), UserID: users[0].ID,
		AccountID: e.account.ID, At: now, Addr: "198.51.100.7:40112", Command: "bind_transceiver", Status: "ESME_RBINDFAIL",
		Reason: "wrong password"}); err != nil {
		t.Fatal(err)
	}
	c.open("/settings/smpp")
	if txt := c.text("main"); !strings.Contains(txt, "shop1") || !strings.Contains(txt, "wrong password") ||
		!strings.Contains(txt, "198.51.100.7") {
		t.Fatalf("the SMPP page lacks its user or its refusal: %q", txt)
	}
	c.shot("smpp")
}

func browserCompliance(t *testing.T, c *chrome) {
	e := c.e
	if r := e.do("POST", "/api/v1/integration/test/replies", e.testKey, map[string]any{"from": "5511977776666", "message": "STOP", "channel": "WHATSAPP"}); r.status != 202 {
		t.Fatalf("a STOP reply: %d %s", r.status, r.body)
	}
	c.open("/settings/compliance?environment=test")
	if !strings.Contains(c.text("main"), "+5511977776666") {
		t.Fatal("the number that answered STOP is not listed")
	}
	c.fill("#phone", "+55 11 96666-5555")
	c.sendForm("/settings/compliance/opt-outs", "after opting a number out", "opted out")
	if r := send(t, e, e.testKey, map[string]any{"to": "5511966665555", "message": "Sale", "type": "SMS"}); r.status != 422 {
		t.Fatalf("a send to the number opted out in the browser: %d %s", r.status, r.body)
	}
	c.fill("#quietHours", "21:00-08:00")
	c.fill("#retentionDays", "90")
	c.fill("#optOutReply", "You will get no more messages from Acme. Reply START to opt back in.")
	c.sendForm("/settings/compliance", "after saving the settings", "settings were saved")
	c.open("/settings/compliance?environment=test")
	c.shot("compliance")
	// Quiet hours hold messages by the wall clock: the pages after this one
	// must not depend on the hour the test runs at.
	setCompliance(t, e, domain.Compliance{})
}

func browserMessages(t *testing.T, c *chrome) {
	e := c.e
	r := send(t, e, e.testKey, map[string]any{"to": "5511988887777", "message": "Your order shipped", "type": "SMS", "callbackUrl": e.hooks.url()})
	mid := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
	polltest.For(t, "its webhooks", 10*time.Second, func() bool { return len(e.hooks.forMessage(mid)) >= 2 })
	c.open("/messages")
	c.fill("#to", "5511988887777")
	c.press("form.search button")
	c.shot("messages")
	c.press(fmt.Sprintf(`a[href="/messages/%s"]`, mid))
	c.shot("message")
	for _, want := range []string{"Your order shipped", e.hooks.url(), "1 · GSM-7", "delivery_status · DELIVERED"} {
		if !strings.Contains(c.text("main"), want) {
			t.Errorf("the message page does not show %q", want)
		}
	}
	r = send(t, e, e.testKey, map[string]any{"to": "5511988887777", "message": "No callback for this one", "type": "SMS"})
	bare := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
	polltest.For(t, "the message without a callback delivered", 10*time.Second, func() bool {
		m, err := e.st.MessageByID(context.Background(), bare)
		return err == nil && m.Status == "DELIVERED"
	})
	c.open("/messages/" + bare)
	if main := c.text("main"); !strings.Contains(main, "No webhook will be sent") || strings.Contains(main, "Not attempted yet") {
		t.Errorf("a message without a callback: %q", main)
	}
	c.shot("message-no-callback")
	c.open("/messages/" + mid)
	events, err := e.st.EventsForMessage(context.Background(), e.account.ID, mid)
	if err != nil || len(events) == 0 {
		t.Fatalf("events: %v %v", events, err)
	}
	before := countHooks(e, events[0].ID)
	if st := c.press(fmt.Sprintf(`button[aria-label="Redeliver webhook %s"]`, events[0].ID)); st != 200 {
		t.Fatalf("redeliver: %d", st)
	}
	polltest.For(t, "the redelivered webhook", 10*time.Second, func() bool { return countHooks(e, events[0].ID) == before+1 })
}

// browserDocs checks that the API reference fits the screen at desktop
// and phone widths: code and tables scroll or wrap inside their boxes.
// The page is too long for a full screenshot; the first screen shows its
// layout.
func browserDocs(t *testing.T, c *chrome) {
	c.open("/docs")
	for _, size := range []struct {
		label string
		width int64
	}{{"desktop", 1280}, {"phone", 390}} {
		c.do("resize to "+size.label, chromedp.EmulateViewport(size.width, 900))
		ctx, cancel := c.step()
		width, err := chromedp.Run(ctx, chromedp.Evaluate[float64]("document.documentElement.scrollWidth"))
		var png []byte
		if err == nil {
			png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
		}
		cancel()
		if err != nil {
			t.Fatalf("/docs at %s: %v", size.label, err)
		}
		if width > float64(size.width) {
			t.Errorf("/docs at %d px is %g px wide", size.width, width)
		}
		if err := os.WriteFile(filepath.Join(c.shots, "docs-"+size.label+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
		// Further down: the operations, with their tables and examples.
		c.open("/docs#op-sendMessage")
	}
	c.do("restore the viewport", chromedp.EmulateViewport(1280, 800))
}

// browserRequestLimits files a limit request and returns its id.
func browserRequestLimits(t *testing.T, c *chrome) string {
	c.open("/settings/limits")
	c.fill("#volume", "500000")
	c.fill("#useCase", "One-time passwords")
	c.fill("#justification", "Launching in Brazil; logins peak at 9:00.")
	c.sendForm("/settings/limits", "after the request", "sent to the operators")
	c.shot("limits")
	reqs, err := c.e.st.LimitRequests(context.Background(), c.e.account.ID)
	if err != nil || len(reqs) != 1 {
		t.Fatalf("requests: %v %v", reqs, err)
	}
	return reqs[0].ID
}

func browserOperator(t *testing.T, c *chrome, requestID string) {
	c.wantHeading("an operator's first page", "Operator")
	c.shot("operator")
	c.fill("#tier-"+requestID, "pro")
	c.fill("#sendRpm-"+requestID, "150")
	c.press(fmt.Sprintf("form[action='/operator/requests/%s/approve'] button", requestID))
	c.wantNotice("after approving", "approved")
	b := c.e.do("GET", "/api/v1/integration/balance", c.e.testKey, nil)
	s := send(t, c.e, c.e.testKey, map[string]any{"to": "5511999990010", "message": "hi", "type": "SMS"})
	if b.header.Get("X-RateLimit-Limit") != "100" || s.header.Get("RateLimit-Limit") != "150" {
		t.Fatalf("the approved limits do not apply at once: tier %s, sending %s", b.header.Get("X-RateLimit-Limit"),
			s.header.Get("RateLimit-Limit"))
	}
	acct := c.e.account.ID
	c.fill("#amount-"+acct, "250")
	c.fill("#note-"+acct, "invoice 7")
	c.press(fmt.Sprintf("#amount-%s ~ button", acct))
	c.wantNotice("after the top-up", "credits were added")
	c.press(fmt.Sprintf(`a[href="/settings/keys?account=%s"]`, acct))
	if !strings.Contains(c.text(".opbar"), "Operator view of") {
		t.Fatal("the operator's view of an account does not say so")
	}
	c.shot("operator-account")
	c.open("/balance?account=" + acct)
	if line := c.text("section[aria-labelledby=ledger] tbody tr"); !strings.Contains(line, "by operator") || !strings.Contains(line, "invoice 7") {
		t.Fatalf("the top-up's ledger line: %q", line)
	}
}

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
