package app

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Settings → Twilio in the panel: a developer makes an account SID and an
// API key and sees each secret once, a viewer is refused, another
// account's developer cannot remove them.
func TestPanelTwilioCredentials(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	ctx := context.Background()
	dev := e.browser()
	dev.login(e.user("developer"))
	const page = "/settings/twilio"
	secretShown := regexp.MustCompile(`id="new-twilio-secret" class="mono" type="text" value="([0-9a-f]{32})"`)

	p := dev.post(page, url.Values{"csrf": {dev.csrf(page)}, "environment": {"live"}, "name": {"shop"}})
	creds, err := e.st.TwilioCredentials(ctx, e.account.ID)
	if p.status != 201 || err != nil || len(creds) != 1 || !strings.Contains(p.body, "Copy the auth token now") {
		t.Fatalf("create: %d %v %v", p.status, creds, err)
	}
	ac := creds[0]
	if m := secretShown.FindStringSubmatch(p.body); m == nil || m[1] != ac.Secret || !strings.Contains(p.body, ac.Sid) {
		t.Fatal("the page does not show the new account SID and its token")
	}
	p = dev.post(page, url.Values{"csrf": {dev.csrf(page)}, "kind": {"apiKey"}, "accountSid": {ac.Sid}})
	creds, _ = e.st.TwilioCredentials(ctx, e.account.ID)
	if p.status != 201 || len(creds) != 2 || creds[1].Parent != ac.Sid || !strings.Contains(p.body, "Copy the secret now") {
		t.Fatalf("create a key: %d %v", p.status, creds)
	}
	if m := secretShown.FindStringSubmatch(p.body); m == nil || m[1] != creds[1].Secret {
		t.Fatal("the page does not show the key's secret")
	}
	list := dev.get(page)
	if strings.Contains(list.body, ac.Secret) || strings.Contains(list.body, creds[1].Secret) || !strings.Contains(list.body, creds[1].Sid) {
		t.Fatal("the list shows a secret, or not the key")
	}
	if p := dev.post(page, url.Values{"csrf": {dev.csrf(page)}, "environment": {"prod"}}); p.status != 400 ||
		!strings.Contains(p.body, "must be test or live") {
		t.Fatalf("a wrong environment: %d", p.status)
	}
	if p := dev.post(page, url.Values{"csrf": {dev.csrf(page)}, "kind": {"apiKey"}, "accountSid": {creds[1].Sid}}); p.status != 400 ||
		!strings.Contains(p.body, "is not an account SID") {
		t.Fatalf("a key of a key: %d", p.status)
	}

	viewer := e.browser()
	viewer.login(e.user("viewer"))
	if page := viewer.get(page); page.status != 403 {
		t.Fatalf("a viewer's Twilio page: %d", page.status)
	}
	if keys := viewer.get("/settings/keys"); strings.Contains(keys.body, `href="/settings/twilio"`) {
		t.Fatal("a viewer is shown the Twilio tab")
	}

	other, _ := otherAccount(t, e)
	if _, _, err := createTestUser(ctx, e.st, other.ID, "dev@other.example", "developer", testPassword, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.login("dev@other.example")
	if theirs := b.get(page); theirs.status != 200 || strings.Contains(theirs.body, ac.Sid) {
		t.Fatalf("the other account's page: %d, or it shows our SID", theirs.status)
	}
	if p := b.post(page+"/"+ac.Sid+"/remove", url.Values{"csrf": {b.csrf(page)}}); p.status != 404 {
		t.Fatalf("B removing A's account SID: %d", p.status)
	}
	if p := dev.post(page+"/"+ac.Sid+"/remove", url.Values{"csrf": {dev.csrf(page)}}); p.status != 303 {
		t.Fatalf("remove: %d", p.status)
	}
	if got, _ := e.st.TwilioCredentials(ctx, e.account.ID); len(got) != 0 {
		t.Fatalf("after removing the account SID: %v", got)
	}
}

// TestTwilioPanelInChromium: a developer makes an account SID and an API
// key in the browser, copies nothing but sees each secret once, and
// removes the account SID with its key.
func TestTwilioPanelInChromium(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	c := newChrome(t, e)
	ctx := context.Background()
	dev := "dora@acme.example"
	if _, _, err := createTestUser(ctx, e.st, e.account.ID, dev, "developer", testPassword, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	c.login(dev)
	c.open("/settings/keys")
	c.do("open the settings menu", chromedp.Click(chromedp.CSS("nav.tabs details.menu summary")))
	c.press("nav a[href='/settings/twilio']")
	if got := c.text("h1"); got != "Twilio" {
		t.Fatalf("the Twilio tab: %q", got)
	}
	c.shot("twilio-empty")
	c.fill("#twilio-env", "live")
	c.fill("#twilio-name", "shop backend")
	if st := c.press("#twilio-account-form button[type=submit]"); st != 201 {
		t.Fatalf("create an account SID: %d", st)
	}
	sid, token := c.value("#new-twilio-sid"), c.value("#new-twilio-secret")
	stored, acct, err := e.st.TwilioCredentialBySid(ctx, sid)
	if err != nil || acct.ID != e.account.ID || stored.Secret != token || stored.Name != "shop backend" {
		t.Fatalf("the SID %q and token the page shows: %+v %v", sid, stored, err)
	}
	c.fill("#twilio-key-name", "billing worker")
	if st := c.press("#twilio-key-form button[type=submit]"); st != 201 {
		t.Fatalf("create an API key: %d", st)
	}
	key := c.value("#new-twilio-sid")
	if k, _, err := e.st.TwilioCredentialBySid(ctx, key); err != nil || k.Parent != sid || k.Secret != c.value("#new-twilio-secret") {
		t.Fatalf("the key the page shows: %q %+v %v", key, k, err)
	}
	c.shot("twilio")
	c.open("/settings/twilio")
	if txt := c.text("main"); strings.Contains(txt, token) || !strings.Contains(txt, key) || !strings.Contains(txt, "API key of "+sid) {
		t.Fatalf("the list: %q", txt)
	}
	if st := c.press("form[action='/settings/twilio/" + sid + "/remove'] button"); st != 200 {
		t.Fatalf("remove: %d", st)
	}
	c.wantNotice("remove", "The Twilio credential was removed")
	if got, _ := e.st.TwilioCredentials(ctx, e.account.ID); len(got) != 0 {
		t.Fatalf("after removing the account SID: %v", got)
	}
}
