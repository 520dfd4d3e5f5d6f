package app

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// The web panel over plain HTTP (the browser tests drive it in Chromium):
// security headers, cookies, forms' forgery protection, session expiry,
// role boundaries and tenancy.

// browser is a cookie-keeping client that does not follow redirects.
type browser struct {
	e      *env
	client *http.Client
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(method, path string, form url.Values, headers ...string) page {
	b.e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.e.base+path, body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

func (b *browser) get(path string) page { return b.do("GET", path, nil) }

func (b *browser) post(path string, form url.Values, headers ...string) page {
	return b.do("POST", path, form, headers...)
}

// login signs in with the login form; it fails the test unless redirected.
func (b *browser) login(email string) {
	b.e.t.Helper()
	p := b.post("/login", url.Values{"email": {email}, "password": {testPassword}})
	if p.status != 303 {
		b.e.t.Fatalf("panel login %s: %d %s", email, p.status, p.body)
	}
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf reads the form token of a page.
func (b *browser) csrf(path string) string {
	b.e.t.Helper()
	m := csrfRe.FindStringSubmatch(b.get(path).body)
	if m == nil {
		b.e.t.Fatalf("no form token on %s", path)
	}
	return m[1]
}

// user adds a user of the env's account (or an operator) and returns its email.
func (e *env) user(role string) string {
	e.t.Helper()
	account := e.account.ID
	if role == "operator" {
		account = ""
	}
	email := role + "-" + strings.ToLower(e.clock.Now().Format("150405.000000000")) + "@acme.example"
	if _, _, err := createTestUser(context.Background(), e.st, account, email, role, testPassword, e.clock.Now()); err != nil {
		e.t.Fatal(err)
	}
	return email
}

func TestPanelHeadersAndCookie(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	b := e.browser()
	p := b.get("/login")
	csp := p.header.Get("Content-Security-Policy")
	if p.status != 200 || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") ||
		!strings.Contains(csp, "frame-ancestors 'none'") || p.header.Get("X-Frame-Options") != "DENY" ||
		p.header.Get("Referrer-Policy") != "no-referrer" || !strings.Contains(p.body, `<label for="email">Email</label>`) {
		t.Fatalf("login page: %d %v", p.status, p.header)
	}
	if strings.Contains(p.body, "<script>") || strings.Contains(p.body, " style=") || strings.Contains(p.body, "onclick") {
		t.Fatal("the page has inline script or style")
	}
	email := e.user("owner")
	p = b.post("/login", url.Values{"email": {email}, "password": {testPassword}})
	c := p.header.Get("Set-Cookie")
	if p.status != 303 || !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Lax") || strings.Contains(c, "Secure") {
		t.Fatalf("login on loopback: %d cookie %q", p.status, c)
	}
	// The connection decides, not the Host header; a proxy's forwarded
	// https makes the cookie Secure.
	p = e.browser().post("/login", url.Values{"email": {email}, "password": {testPassword}}, "Host", "panel.example.com")
	if c := p.header.Get("Set-Cookie"); strings.Contains(c, "Secure") || !strings.Contains(c, "HttpOnly") {
		t.Fatalf("login on loopback under a public name: cookie %q", c)
	}
	p = e.browser().post("/login", url.Values{"email": {email}, "password": {testPassword}}, "X-Forwarded-Proto", "https")
	if c := p.header.Get("Set-Cookie"); !strings.Contains(c, "Secure") || !strings.Contains(c, "HttpOnly") {
		t.Fatalf("login forwarded as https: cookie %q", c)
	}
	if p := b.get("/settings/keys"); p.status != 200 || !strings.Contains(p.body, "Generate key") {
		t.Fatalf("keys page: %d", p.status)
	}
	if p := b.get("/static/panel.css"); p.status != 200 || !strings.HasPrefix(p.header.Get("Content-Type"), "text/css") {
		t.Fatalf("style sheet: %d %v", p.status, p.header)
	}
	if p := e.browser().get("/settings/keys"); p.status != 303 || p.header.Get("Location") != "/login?next=%2Fsettings%2Fkeys" {
		t.Fatalf("signed out: %d %v", p.status, p.header.Get("Location"))
	}
	if p := b.post("/login", url.Values{"email": {email}, "password": {testPassword}, "next": {"//evil.example/"}}); p.header.Get("Location") != "/" {
		t.Fatalf("a login may redirect off-site: %v", p.header.Get("Location"))
	}
}

// Every state-changing form needs the session's token, and comes from the
// panel's own origin.
func TestPanelForgedForms(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	b := e.browser()
	b.login(e.user("owner"))
	token := b.csrf("/settings/keys")
	keys := func() int {
		k, err := e.st.Keys(context.Background(), e.account.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(k)
	}
	before := keys()
	form := url.Values{"environment": {"test"}, "name": {"forged"}}
	if p := b.post("/settings/keys", form); p.status != 403 || !strings.Contains(p.body, "This form has expired") {
		t.Fatalf("no token: %d", p.status)
	}
	form.Set("csrf", strings.Repeat("0", len(token)))
	if p := b.post("/settings/keys", form); p.status != 403 {
		t.Fatalf("a wrong token: %d", p.status)
	}
	form.Set("csrf", token)
	if p := b.post("/settings/keys", form, "Sec-Fetch-Site", "cross-site"); p.status != 403 || !strings.Contains(p.body, "another site") {
		t.Fatalf("a cross-site post with the token: %d", p.status)
	}
	if p := b.post("/settings/keys", form, "Origin", "https://evil.example"); p.status != 403 {
		t.Fatalf("a post from another origin: %d", p.status)
	}
	if keys() != before {
		t.Fatal("a refused form made a key")
	}
	if p := b.post("/settings/keys", form, "Sec-Fetch-Site", "same-origin"); p.status != 201 || !strings.Contains(p.body, "svc_test_") {
		t.Fatalf("the real form: %d", p.status)
	}
	// Another session's token is not this session's.
	other := e.browser()
	other.login(e.user("owner"))
	form.Set("csrf", other.csrf("/settings/keys"))
	if p := b.post("/settings/keys", form); p.status != 403 {
		t.Fatalf("another session's token: %d", p.status)
	}
}

func TestPanelSessionExpiry(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	b := e.browser()
	b.login(e.user("admin"))
	e.clock.Advance(12*time.Hour + time.Minute)
	p := b.get("/settings/limits")
	if p.status != 303 || p.header.Get("Location") != "/login?next=%2Fsettings%2Flimits&note=expired" {
		t.Fatalf("expired session: %d %v", p.status, p.header.Get("Location"))
	}
	if p := b.get(p.header.Get("Location")); !strings.Contains(p.body, "Your session ended after 12 hours without activity") {
		t.Fatalf("the login page does not say why: %s", p.body)
	}
	// Logging out ends the session on the server too.
	b = e.browser()
	b.login(e.user("admin"))
	cookies := b.client.Jar.Cookies(mustURL(t, e.base))
	if p := b.post("/logout", url.Values{"csrf": {b.csrf("/account")}}); p.status != 303 {
		t.Fatalf("logout: %d", p.status)
	}
	replay := e.browser()
	replay.client.Jar.SetCookies(mustURL(t, e.base), cookies)
	if p := replay.get("/settings/keys"); p.status != 303 {
		t.Fatalf("a logged-out cookie still works: %d", p.status)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// The pages offer only what the role may do, and the server refuses the
// rest with a clear page whatever the browser sends.
func TestPanelRoles(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	_, rec := e.addKey(e.account.ID, "test")
	viewer := e.browser()
	viewer.login(e.user("viewer"))
	p := viewer.get("/settings/keys")
	if p.status != 200 || strings.Contains(p.body, "Generate key") || strings.Contains(p.body, ">Revoke<") || !strings.Contains(p.body, rec.Prefix) {
		t.Fatalf("a viewer's keys page offers changes or hides keys: %d", p.status)
	}
	p = viewer.post("/settings/keys/"+rec.ID+"/revoke", url.Values{"csrf": {viewer.csrf("/settings/keys")}})
	if p.status != 403 || !strings.Contains(p.body, "Not allowed") || !strings.Contains(p.body, "viewer") {
		t.Fatalf("a viewer revoking: %d", p.status)
	}
	if k, _ := e.st.Keys(context.Background(), e.account.ID); !k[0].RevokedAt.IsZero() {
		t.Fatal("the viewer's refused revoke revoked")
	}
	dev := e.browser()
	dev.login(e.user("developer"))
	if p := dev.get("/settings/security"); strings.Contains(p.body, "Save allow-list") || strings.Contains(p.body, "Rotate secret") {
		t.Fatal("a developer is offered the allow-list or the secret")
	}
	p = dev.post("/settings/security/allowlist", url.Values{"csrf": {dev.csrf("/settings/security")}, "entries": {"203.0.113.7"}})
	if p.status != 403 {
		t.Fatalf("a developer setting the allow-list: %d", p.status)
	}
	if a, _ := e.st.Account(context.Background(), e.account.ID); len(a.IPAllowlist) != 0 {
		t.Fatal("the refused allow-list was saved")
	}
	if p := dev.get("/operator"); p.status != 403 {
		t.Fatalf("a developer on the operator page: %d", p.status)
	}
	if p := dev.post("/settings/security/secret/reveal", url.Values{"csrf": {dev.csrf("/settings/security")}}); p.status != 403 ||
		strings.Contains(p.body, e.account.WebhookSecret) {
		t.Fatalf("a developer revealing the secret: %d", p.status)
	}
}

// One account's users never see another's data, whatever they put in the
// address; operators choose the account.
func TestPanelTenancy(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	other, err := CreateAccount(context.Background(), e.st, NewAccount{Name: "Other Corp", Tier: "basic", Credits: 5, Currency: "EUR",
		Country: "44"}, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	ok, okRec := e.addKey(other.ID, "test")
	s := send(t, e, ok.Secret, map[string]any{"to": "5511999990077", "message": "theirs", "type": "SMS"})
	theirs := s.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
	owner := e.browser()
	owner.login(e.user("owner"))
	for _, path := range []string{"/settings/keys?account=" + other.ID, "/messages?account=" + other.ID, "/balance?account=" + other.ID} {
		p := owner.get(path)
		if p.status != 200 || strings.Contains(p.body, okRec.Prefix) || strings.Contains(p.body, theirs) || strings.Contains(p.body, "Other Corp") {
			t.Fatalf("%s shows the other account: %d", path, p.status)
		}
	}
	if p := owner.get("/messages/" + theirs); p.status != 404 {
		t.Fatalf("their message: %d", p.status)
	}
	op := e.browser()
	op.login(e.user("operator"))
	if p := op.get("/"); p.header.Get("Location") != "/operator" {
		t.Fatalf("an operator's home: %v", p.header.Get("Location"))
	}
	if p := op.get("/operator"); !strings.Contains(p.body, "Other Corp") || !strings.Contains(p.body, "Acme") {
		t.Fatal("the operator page does not list the accounts")
	}
	if p := op.get("/settings/keys?account=" + other.ID); p.status != 200 || !strings.Contains(p.body, okRec.Prefix) {
		t.Fatalf("an operator on their keys: %d", p.status)
	}
	if p := op.get("/messages/" + theirs + "?account=" + other.ID); p.status != 200 {
		t.Fatalf("an operator on their message: %d", p.status)
	}
}

func TestPanelLoginThrottle(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	email := e.user("owner")
	e.placeAt(time.Second)
	b := e.browser()
	if p := b.post("/login", url.Values{"email": {email}, "password": {"wrong horse battery"}}); p.status != 401 ||
		!strings.Contains(p.body, "The email or password is wrong") {
		t.Fatalf("a wrong password: %d", p.status)
	}
	for i := 0; i < 29; i++ {
		e.do("GET", "/api/v1/integration/balance", "svc_test_"+strings.Repeat("x", 40), nil)
	}
	if p := b.post("/login", url.Values{"email": {email}, "password": {testPassword}}); p.status != 429 ||
		!strings.Contains(p.body, "Too many failed attempts from your address") {
		t.Fatalf("the right password from a throttled address: %d", p.status)
	}
}

// A message's page shows what was sent and where its webhooks go, and
// each webhook the status it carried; a send without a callbackUrl says
// that no webhook will come.
func TestPanelMessagePage(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	b := e.browser()
	b.login(e.user("viewer"))
	r := send(t, e, e.testKey, map[string]any{"to": "5511999990000", "message": "Olá <b>table</b> for 2", "type": "SMS",
		"reference": "ref-77", "callbackUrl": e.hooks.url()})
	hooked := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
	r = send(t, e, e.testKey, map[string]any{"to": "5511999990000", "message": "no hooks", "type": "SMS"})
	bare := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
	var p page
	polltest.For(t, "the DELIVERED webhook delivered", 10*time.Second, func() bool {
		p = b.get("/messages/" + hooked)
		return strings.Contains(p.body, `delivery_status · <span class="badge delivered">DELIVERED</span> · webhook <span class="badge delivered">delivered</span>`)
	})
	for _, want := range []string{"Olá &lt;b&gt;table&lt;/b&gt; for 2", e.hooks.url(), "1 · UCS-2", "the route's own sender", "ref-77",
		`delivery_status · <span class="badge sent">SENT</span>`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the message page lacks %q:\n%s", want, p.body)
		}
	}
	if strings.Contains(p.body, "No webhook will be sent") {
		t.Error("a send with a callbackUrl says no webhook will be sent")
	}
	polltest.For(t, "the bare message delivered", 10*time.Second, func() bool {
		p = b.get("/messages/" + bare)
		return strings.Contains(p.body, `<span class="badge delivered">DELIVERED</span>`)
	})
	if !strings.Contains(p.body, "No webhook will be sent") || strings.Contains(p.body, "Not attempted yet") ||
		strings.Contains(p.body, "webhook <span") || !strings.Contains(p.body, "none: no webhooks are sent") {
		t.Errorf("a send without a callbackUrl:\n%s", p.body)
	}
}

// An address the panel does not serve is an HTML page for a browser, and
// problem+json for a program; an owner on the operator page is told who
// can open it.
func TestPanelNotFoundAndOperatorOnly(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	b := e.browser()
	p := b.do("GET", "/settings/nope", nil, "Accept", "text/html,application/xhtml+xml")
	if p.status != 404 || !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") || !strings.Contains(p.body, "Page not found") ||
		p.header.Get("Content-Security-Policy") == "" {
		t.Fatalf("an unknown page in a browser: %d %s\n%s", p.status, p.header.Get("Content-Type"), p.body)
	}
	if r := e.do("GET", "/settings/nope", "", nil); r.status != 404 || !strings.Contains(r.header.Get("Content-Type"), "problem+json") {
		t.Fatalf("an unknown path for a program: %d %s", r.status, r.header.Get("Content-Type"))
	}
	if r := e.do("GET", "/api/v1/manage/nope", "", nil, "Accept", "text/html"); !strings.Contains(r.header.Get("Content-Type"), "problem+json") {
		t.Fatalf("an unknown API path from a browser: %s", r.header.Get("Content-Type"))
	}
	b.login(e.user("owner"))
	p = b.get("/operator")
	if p.status != 403 || strings.Contains(p.body, "Ask an owner") || !strings.Contains(p.body, "the service&#39;s operators") {
		t.Fatalf("an owner on the operator page: %d\n%s", p.status, p.body)
	}
}

// In the panel an admin asks for a sender and an operator decides it on
// the operator page, beside the limit requests; a value another account
// holds is refused with a clear message and changes nothing.
func TestPanelSenderRequests(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	ctx := context.Background()
	admin := e.browser()
	admin.login(e.user("admin"))
	for _, v := range []string{"MyShop", "Later"} {
		p := admin.post("/settings/senders", url.Values{"csrf": {admin.csrf("/settings/senders")}, "channel": {"SMS"}, "value": {v}})
		if p.status != 303 || !strings.Contains(p.header.Get("Location"), "done=sender") {
			t.Fatalf("request %s: %d %s", v, p.status, p.header.Get("Location"))
		}
	}
	if p := admin.get("/settings/senders"); !strings.Contains(p.body, "PENDING") || !strings.Contains(p.body, "Request a sender") {
		t.Fatal("the senders page does not show the pending request")
	}
	list, _ := e.st.Senders(ctx, e.account.ID)
	if p := admin.post("/operator/senders/"+list[1].ID+"/approve", url.Values{"csrf": {admin.csrf("/settings/senders")}}); p.status != 403 {
		t.Fatalf("an admin approving: %d", p.status)
	}
	op := e.browser()
	op.login(e.user("operator"))
	p := op.get("/operator")
	if !strings.Contains(p.body, "Pending sender requests") || !strings.Contains(p.body, "MyShop") || !strings.Contains(p.body, "Later") {
		t.Fatal("the operator page does not list the sender requests")
	}
	byValue := map[string]string{}
	for _, sd := range list {
		byValue[sd.Value] = sd.ID
	}
	if p := op.post("/operator/senders/"+byValue["MyShop"]+"/approve", url.Values{"csrf": {op.csrf("/operator")}}); p.status != 303 {
		t.Fatalf("approve: %d", p.status)
	}
	later := byValue["Later"]
	if !strings.Contains(p.body, `action="/operator/senders/`+later+`/reject"`) || !strings.Contains(p.body, `id="sreason-`+later+`"`) {
		t.Fatal("the operator page has no rejection form for the sender request")
	}
	// A rejection without a reason is refused, the message at the reason.
	if p := op.post("/operator/senders/"+later+"/reject", url.Values{"csrf": {op.csrf("/operator")}, "reason": {" "}}); p.status != 400 ||
		!strings.Contains(p.body, `aria-describedby="err-sreason-`+later+`"`) || !strings.Contains(p.body, `id="err-sreason-`+later+`">is required`) {
		t.Fatalf("reject without a reason: %d %s", p.status, p.body)
	}
	if p := op.post("/operator/senders/"+byValue["Later"]+"/reject", url.Values{"csrf": {op.csrf("/operator")}, "reason": {"Which brand?"}}); p.status != 303 {
		t.Fatalf("reject: %d", p.status)
	}
	if p := admin.get("/settings/senders"); !strings.Contains(p.body, "APPROVED") || !strings.Contains(p.body, "Which brand?") {
		t.Fatal("the decisions do not show to the account")
	}
	// Another account's admin asking for the held value, in another case.
	other := e.addAccount(NewAccount{Name: "Other Corp", Tier: "basic", Currency: "EUR", Country: "44"})
	if _, _, err := createTestUser(ctx, e.st, other.ID, "admin@other.example", "admin", testPassword, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.login("admin@other.example")
	p = b.post("/settings/senders", url.Values{"csrf": {b.csrf("/settings/senders")}, "channel": {"SMS"}, "value": {"myshop"}})
	if p.status != 409 || !strings.Contains(p.body, "already approved for another account") || strings.Contains(p.body, "Acme") {
		t.Fatalf("B asking for A's sender: %d", p.status)
	}
	if got, _ := e.st.Senders(ctx, other.ID); len(got) != 0 {
		t.Fatalf("B's refused request was recorded: %v", got)
	}
	if got, _ := e.st.Sender(ctx, byValue["MyShop"]); got.Status != domain.SenderApproved {
		t.Fatalf("A's sender: %+v", got)
	}
}
