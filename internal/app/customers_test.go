package app

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// The panel's Customers pages (docs/panel.md): a reseller's owner manages
// its children in Chromium at desktop and phone widths, and over plain
// HTTP nobody outside a child's parent (nor a role below admin) reaches
// any of its paths.

// TestCustomersInChromium: at each width the reseller's owner creates a
// child, is refused prices below its own and sets others, tops the child
// up, is refused taking back more than it holds, takes some back,
// suspends and resumes it; each step is checked on the page and in the
// store. The child's send shows as its usage and the reseller's margin.
func TestCustomersInChromium(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	c := newChrome(t, e)
	ctx := context.Background()
	reseller := e.childAccount("Revenda Sul", "", 1000)
	owner := "rita@revenda.example"
	if _, _, err := createTestUser(ctx, e.st, reseller.ID, owner, "owner", testPassword, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	c.login(owner)
	c.open("/")
	if !c.eval(`[...document.querySelectorAll("nav.tabs a")].some(a => a.textContent === "Customers")`) {
		t.Fatal("a reseller's owner has no Customers tab")
	}
	var first string
	for _, size := range []struct {
		label string
		width int64
		name  string
	}{{"desktop", 1280, "Padaria Central"}, {"phone", 390, "Mercado Bom Preço"}} {
		c.do("resize to "+size.label, chromedp.EmulateViewport(size.width, 900))
		id := customersFlow(t, c, size.name)
		if first == "" {
			first = id
		}
		if c.eval("document.documentElement.scrollWidth > window.innerWidth") {
			t.Errorf("the customer's page at %d px is wider than the screen", size.width)
		}
	}

	// The first child sends one live SMS: the list shows its use and the
	// reseller's margin on it (1.5 charged, 1 its own cost).
	key, _ := e.addKey(first, "live")
	if r := send(t, e, key.Secret, map[string]any{"to": "5511999990301", "message": "oi", "type": "SMS"}); r.status != 202 {
		t.Fatalf("the child's send: %d %s", r.status, r.body)
	}
	polltest.For(t, "the child's message in the margins", 15*time.Second, func() bool {
		rows, err := e.st.ResellerMargins(ctx, reseller.ID, e.clock.Now().AddDate(0, 0, -1), e.clock.Now())
		return err == nil && len(rows) == 2 && (rows[0].Messages == 1 || rows[1].Messages == 1)
	})
	c.do("resize to desktop", chromedp.EmulateViewport(1280, 900))
	c.open("/customers")
	row := c.text(fmt.Sprintf(`#customers-table tr[data-id="%s"]`, first))
	for _, want := range []string{"Padaria Central", "22", "active", "on delivery", "1", "1.5", "0.5"} {
		if !strings.Contains(row, want) {
			t.Errorf("the first child's row lacks %q: %q", want, row)
		}
	}
	if n := c.text("#customers-table tbody"); !strings.Contains(n, "Mercado Bom Preço") {
		t.Errorf("the list lacks the second child: %q", n)
	}
	c.shot("panel-customers")
	c.open("/customers/" + url.PathEscape(first))
	if m := c.text("#customer-margin"); !strings.Contains(m, "1 sent") || !strings.Contains(m, "margin 0.5") {
		t.Errorf("the child's margin: %q", m)
	}
	c.shot("panel-customer")
	// The margin guard's refusal, as a reseller sees it at either width.
	c.fill("#prices", `{"abroad": {"smsSegment": 0.1}}`)
	if st := c.press("form[action='/customers/" + first + "/prices'] button"); st != 400 {
		t.Fatalf("prices below cost: %d", st)
	}
	c.shot("panel-customer-refused")
}

// customersFlow drives one child through the Customers pages and returns
// its id.
func customersFlow(t *testing.T, c *chrome, name string) string {
	t.Helper()
	ctx := context.Background()
	c.open("/customers")
	c.wantHeading("the customers page", "Customers")
	c.fill("#name", name)
	c.fill("#country", "55")
	c.do("bill on delivery", chromedp.SetValue(chromedp.CSS("#billing"), "delivery"))
	if st := c.press("form[action='/customers'] button[type=submit]"); st != 200 {
		t.Fatalf("create %s: %d", name, st)
	}
	c.wantNotice("create "+name, "customer was created")
	c.wantHeading("the new customer's page", name)
	id := c.text(".idline .mono")
	child, err := c.e.st.Account(ctx, id)
	if err != nil || child.Name != name || !child.BillsOnDelivery() || child.ParentID == "" {
		t.Fatalf("the created child %q: %+v %v", id, child, err)
	}
	base := "/customers/" + id

	// Below the reseller's own price: refused, shown at the table, nothing saved.
	c.fill("#prices", `{"home": {"smsSegment": 0.5}}`)
	if st := c.press("form[action='" + base + "/prices'] button"); st != 400 {
		t.Fatalf("prices below cost: %d", st)
	}
	if msg := c.text("#err-prices"); !strings.Contains(msg, "SMS segment to +55: 0.5 against your 1") || !strings.Contains(msg, "Sell below my cost") {
		t.Errorf("the margin guard's refusal: %q", msg)
	}
	if a, _ := c.e.st.Account(ctx, id); a.Prices != "" {
		t.Fatalf("a refused price table was saved: %s", a.Prices)
	}
	c.fill("#prices", `{"home": {"smsSegment": 1.5}}`)
	c.sendForm(base+"/prices", "set prices", "prices were saved")
	saved := mustAccount(t, c, id)
	if p, err := saved.PriceList(); err != nil || p.Home.SMSSegment != 1_500_000 {
		t.Fatalf("saved prices: %+v %v", p.Home, err)
	}
	if got := c.text("#prices-table"); !strings.Contains(got, "1.5") {
		t.Errorf("the prices table: %q", got)
	}

	// Top up 40, then try to take back 100 (refused), then take back 15.
	c.fill("#amount", "40")
	c.fill("#note", "first month")
	c.press("form[action='" + base + "/transfers'] button[value=in]")
	c.wantNotice("top up", "moved to the customer")
	if b := c.text("#customer-balance"); !strings.HasPrefix(b, "40 ") {
		t.Errorf("balance after the top-up: %q", b)
	}
	c.fill("#amount", "100")
	if st := c.press("form[action='" + base + "/transfers'] button[value=back]"); st != 400 {
		t.Fatalf("take back more than the child holds: %d", st)
	}
	if msg := c.text("#err-amount"); !strings.Contains(msg, "below zero") {
		t.Errorf("the refused take-back: %q", msg)
	}
	if a := mustAccount(t, c, id); a.Balance != 40*ledger.Micro {
		t.Fatalf("after a refused take-back the balance is %d", a.Balance)
	}
	c.fill("#amount", "15")
	c.press("form[action='" + base + "/transfers'] button[value=back]")
	c.wantNotice("take back", "taken back")
	if a := mustAccount(t, c, id); a.Balance != 25*ledger.Micro {
		t.Fatalf("after taking back 15 the balance is %d", a.Balance)
	}
	if l := c.text("#customer-ledger"); !strings.Contains(l, "first month") || !strings.Contains(l, "-15") {
		t.Errorf("the child's ledger: %q", l)
	}

	c.sendForm(base+"/suspend", "suspend", "was suspended")
	if s := c.text("#customer-status"); !strings.Contains(s, "suspended") || !mustAccount(t, c, id).Suspended() {
		t.Fatalf("after suspending: %q", s)
	}
	c.sendForm(base+"/resume", "resume", "was resumed")
	if s := c.text("#customer-status"); !strings.Contains(s, "active") || mustAccount(t, c, id).Suspended() {
		t.Fatalf("after resuming: %q", s)
	}
	// Hand back 1.5 of the 25 so the list's balance tells the two children apart.
	c.fill("#amount", "1.5")
	c.press("form[action='" + base + "/transfers'] button[value=back]")
	c.wantNotice("take back 1.5", "taken back")
	return id
}

func mustAccount(t *testing.T, c *chrome, id string) domain.Account {
	t.Helper()
	a, err := c.e.st.Account(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestCustomersPanelTenancy: every Customers path, read and form, tried
// with another account's ids by a sibling, a child reaching for its
// parent, another reseller, a grandparent skipping the child between, a
// plain account's owner, and a reseller's developer and viewer: each is
// answered 404 (or 403 for a role or an account that may not have
// customers), shows nothing of the target and changes nothing. The same
// requests by the child's own parent go through, so the paths are right.
func TestCustomersPanelTenancy(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	ctx := context.Background()
	r1 := e.childAccount("Reseller One", "", 100)
	c1 := e.childAccount("Child One", r1.ID, 10)
	c2 := e.childAccount("Child Two", r1.ID, 10)
	g := e.childAccount("Grandchild", c1.ID, 5)
	r2 := e.childAccount("Reseller Two", "", 100)
	d := e.childAccount("Other Child", r2.ID, 10)
	all := []domain.Account{r1, c1, c2, g, r2, d, e.account}
	as := func(accountID, role string) *browser {
		t.Helper()
		email := fmt.Sprintf("%s-%s@tenancy.example", role, strings.ToLower(accountID))
		if _, _, err := createTestUser(ctx, e.st, accountID, email, role, testPassword, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		b := e.browser()
		b.login(email)
		return b
	}
	type state struct {
		balance             int64
		prices, billing     string
		suspended, reseller bool
		children            int
	}
	snapshot := func() map[string]state {
		t.Helper()
		out := map[string]state{}
		for _, a := range all {
			got, err := e.st.Account(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			kids, err := e.st.Children(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			out[a.ID] = state{got.Balance, got.Prices, string(got.Billing), got.Suspended(), got.Reseller, len(kids)}
		}
		return out
	}
	forms := []struct {
		path string
		form url.Values
	}{
		{"/prices", url.Values{"prices": {`{"home": {"smsSegment": 9}}`}}},
		{"/billing", url.Values{"billing": {"delivery"}}},
		{"/transfers", url.Values{"amount": {"1"}, "direction": {"in"}}},
		{"/transfers", url.Values{"amount": {"1"}, "direction": {"back"}}},
		{"/suspend", url.Values{}},
		{"/resume", url.Values{}},
	}
	// try sends every path about target and wants one of codes for each.
	try := func(who string, b *browser, target domain.Account, codes ...int) {
		t.Helper()
		token := b.csrf("/account")
		want := func(what string, p page) {
			t.Helper()
			if !slices.Contains(codes, p.status) {
				t.Errorf("%s, %s on %s: %d, want one of %v", who, what, target.Name, p.status, codes)
			}
			if strings.Contains(p.body, target.Name) {
				t.Errorf("%s, %s: the answer names %s", who, what, target.Name)
			}
		}
		want("GET", b.get("/customers/"+target.ID))
		for _, f := range forms {
			form := url.Values{"csrf": {token}}
			for k, v := range f.form {
				form[k] = v
			}
			want("POST "+f.path, b.post("/customers/"+target.ID+f.path, form))
		}
	}
	before := snapshot()

	r1Owner, r1Dev, r1Viewer := as(r1.ID, "owner"), as(r1.ID, "developer"), as(r1.ID, "viewer")
	c1Owner, c2Owner, r2Owner, plain := as(c1.ID, "owner"), as(c2.ID, "owner"), as(r2.ID, "owner"), as(e.account.ID, "owner")
	try("a sibling", c2Owner, c1, 404)
	try("a sibling", c2Owner, g, 404)
	try("a child", c1Owner, r1, 404)
	try("a child", c1Owner, c2, 404)
	try("another reseller", r2Owner, c1, 404)
	try("another reseller", r2Owner, g, 404)
	try("another reseller", r2Owner, r1, 404)
	try("a child of another tree", as(d.ID, "owner"), c1, 404)
	try("the grandparent", r1Owner, g, 404)
	try("a plain account", plain, c1, 404)
	try("the reseller's developer", r1Dev, c1, 403)
	try("the reseller's viewer", r1Viewer, c1, 403)
	// The list and the create form: refused to roles below admin and to
	// accounts that are no resellers, which are offered no tab either.
	for _, c := range []struct {
		who string
		b   *browser
	}{{"developer", r1Dev}, {"viewer", r1Viewer}, {"plain owner", plain}} {
		if p := c.b.get("/customers"); p.status != 403 || strings.Contains(p.body, c1.Name) {
			t.Errorf("%s: GET /customers %d", c.who, p.status)
		}
		if p := c.b.post("/customers", url.Values{"csrf": {c.b.csrf("/account")}, "name": {"Sneaky"}, "country": {"55"}}); p.status != 403 {
			t.Errorf("%s: POST /customers %d", c.who, p.status)
		}
		if strings.Contains(c.b.get("/account").body, `href="/customers"`) {
			t.Errorf("%s is offered the Customers tab", c.who)
		}
	}
	// A reseller's list shows its own children, not a grandchild or another tree.
	if p := c2Owner.get("/customers"); p.status != 200 || strings.Contains(p.body, g.Name) || strings.Contains(p.body, c1.Name) {
		t.Errorf("a sibling's own list: %d", p.status)
	}
	// An operator on one reseller's page does not reach another's child through it.
	op := as("", "operator")
	if p := op.get("/customers/" + c1.ID + "?account=" + r2.ID); p.status != 404 {
		t.Errorf("an operator on a child through the wrong reseller: %d", p.status)
	}
	after := snapshot()
	for id, s := range before {
		if after[id] != s {
			t.Errorf("account %s changed: %+v, was %+v", id, after[id], s)
		}
	}

	// The parent itself: the same paths answer and act.
	if p := r1Owner.get("/customers"); p.status != 200 || !strings.Contains(p.body, c1.Name) || !strings.Contains(p.body, `href="/customers"`) ||
		strings.Contains(p.body, r2.Name) || strings.Contains(p.body, d.Name) {
		t.Fatalf("the parent's list: %d", p.status)
	}
	if p := r1Owner.get("/customers/" + c1.ID); p.status != 200 || !strings.Contains(p.body, g.Name) {
		t.Fatalf("the parent on its child (with the grandchild listed): %d", p.status)
	}
	token := r1Owner.csrf("/account")
	for _, f := range forms {
		form := url.Values{"csrf": {token}}
		for k, v := range f.form {
			form[k] = v
		}
		if p := r1Owner.post("/customers/"+c1.ID+f.path, form); p.status != 303 {
			t.Errorf("the parent, POST %s: %d %s", f.path, p.status, p.body)
		}
	}
	got, err := e.st.Account(ctx, c1.ID)
	if err != nil || !got.BillsOnDelivery() || got.Prices == "" || got.Suspended() || got.Balance != 10*ledger.Micro {
		t.Fatalf("the child after its parent's forms: %+v %v", got, err)
	}
	if p := op.get("/customers/" + c1.ID + "?account=" + r1.ID); p.status != 200 || !strings.Contains(p.body, c1.Name) {
		t.Errorf("an operator on the reseller's child: %d", p.status)
	}
}
