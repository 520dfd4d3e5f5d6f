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
	if msg := c.text("#err-prices"); !strings.Contains(msg, "below your own") || !strings.Contains(msg, "Sell below my cost") {
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
