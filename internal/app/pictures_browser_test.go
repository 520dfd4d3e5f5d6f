package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// navProblems checks the navigation as the screen shows it: every link
// and menu of the row inside the screen, and every link of each menu,
// opened in turn, inside the screen and not covered or clipped. With
// fits, the row must also not scroll. It answers the number of links
// checked and the problems found ("" when none).
const navProblems = `((fits) => {
  const bad = [];
  let links = 0;
  const sc = document.querySelector("nav.tabs .scroller");
  if (fits && sc.scrollWidth > sc.clientWidth) bad.push("the row scrolls: " + sc.scrollWidth + " > " + sc.clientWidth);
  const W = window.innerWidth, H = window.innerHeight;
  const seen = (el) => {
    const r = el.getBoundingClientRect(), what = el.textContent.trim();
    if (r.width === 0 || r.left < -1 || r.right > W + 1 || r.top < -1 || r.bottom > H + 1) {
      bad.push(what + " is outside the screen: " + [r.left, r.right, r.top, r.bottom].map(Math.round).join(","));
      return;
    }
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (hit !== el && !el.contains(hit)) bad.push(what + " is covered or clipped");
  };
  document.querySelectorAll("nav.tabs .scroller > ul > li > a").forEach((a) => { links++; if (fits) seen(a); });
  document.querySelectorAll("nav.tabs .scroller > ul > li > details").forEach((d) => {
    const s = d.querySelector("summary");
    s.scrollIntoView({inline: "nearest", block: "nearest"});
    seen(s);
    d.open = true;
    d.querySelectorAll("ul a").forEach((a) => { links++; seen(a); });
    d.open = false;
  });
  return links + ":" + bad.join("; ");
})`

// The pictures of the operator's console in a real browser, at desktop
// (1280 px) and phone (390 px) widths: the operator's navigation fits at
// 1280 with every entry on screen, the phone's shows that it scrolls, the
// overview's trend and Balance's credits are charts, the SMPP page shows
// binds and refusals, replies are listed and shown on their message, a
// message list on a phone is compact rows, and the operators' home charts
// traffic across accounts.
func TestConsolePicturesInChromium(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{credits: 5000})
	c := newChrome(t, e)
	ctx := context.Background()
	backfillUsage(t, e)
	other, err := CreateAccount(ctx, e.st, NewAccount{Name: "Globex", Tier: "enterprise", Credits: 500, Currency: "USD", Country: "1"},
		e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.SetLimits(ctx, other.ID, domain.Limits{}); err != nil {
		t.Fatal(err)
	}
	otherLive, _ := e.addKey(other.ID, "live")
	for day := 9; day >= 0; day-- {
		e.clock.Advance(-time.Duration(day) * 24 * time.Hour)
		for i := range 1 + day%4 {
			send(t, e, otherLive.Secret, map[string]any{"to": fmt.Sprintf("55119999904%02d", i), "message": "hi", "type": "SMS"})
		}
		e.clock.Advance(time.Duration(day) * 24 * time.Hour)
	}
	// A message answered twice.
	const guest = "5511977770042"
	asked := msgID(t, send(t, e, e.testKey, map[string]any{"to": guest, "message": "Your table for 4 is booked for 20:00. Reply to change it.",
		"type": "SMS"}), 0)
	polltest.For(t, "the message delivered", 10*time.Second, func() bool {
		m, err := e.st.MessageByID(ctx, asked)
		return err == nil && m.Status == domain.Delivered
	})
	testReply(t, e, e.testKey, guest, "Can we make it 20:30?")
	e.clock.Advance(time.Minute)
	testReply(t, e, e.testKey, guest, "Thanks — see you then")
	testReply(t, e, e.testKey, "5511977770043", "Who is this?")
	// An SMPP user bound from one address and refused from another. This
	// node runs no SMPP listener, so the bind and refusals are kept the way
	// the SMPP server keeps them.
	u, _, err := console(e.st, e.clock.Now()).CreateSMPPUser(ctx, manage.Console, e.account.ID, manage.NewSMPPUser{Environment: "live",
		SystemID: "acme_erp"})
	if err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now().UTC()
	if ok, err := e.st.ReserveSMPPBind(ctx, domain.SMPPBind{ID: "bnd_browser1", UserID: u.ID, Node: "node-1", Addr: "203.0.113.10",
		Type: "bind_transceiver"}, 4, now, now.Add(time.Hour)); err != nil || !ok {
		t.Fatalf("bind: %v %v", ok, err)
	}
	for i, rf := range []struct{ addr, cmd, status, reason string }{
		{"198.51.100.23", "bind_transmitter", "ESME_RBINDFAIL", "wrong password"},
		{"203.0.113.10", "submit_sm", "ESME_RTHROTTLED", "over the account's send rate limit"},
		{"203.0.113.10", "submit_sm", "ESME_RINVSRCADR", "source_addr MyShop is not an approved sender of the account"},
	} {
		at := now.Add(time.Duration(i) * time.Second)
		if err := e.st.RecordSMPPRefusal(ctx, domain.SMPPRefusal{ID: id.New(id.SMPPRefusal, at), UserID: u.ID, AccountID: e.account.ID,
			At: at, Addr: rf.addr, Command: rf.cmd, Status: rf.status, Reason: rf.reason}); err != nil {
			t.Fatal(err)
		}
	}
	owner, op := "olga@acme.example", "omar@msgsvc.example"
	for _, who := range []struct{ account, email, role string }{{e.account.ID, owner, "owner"}, {"", op, "operator"}} {
		if _, _, err := createTestUser(ctx, e.st, who.account, who.email, who.role, testPassword, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}

	c.login(owner)
	c.wantHeading("after login", "Overview")
	if !c.eval(`document.querySelectorAll("#chart-trend-messages rect.bar").length >= 14 && document.querySelector("#chart-trend-credits polyline") !== null &&
		document.querySelector("#chart-trend-messages svg title").textContent.startsWith("Messages per day")`) {
		t.Error("the overview has no 30-day trend of messages and credits")
	}
	c.shot("overview")
	c.open("/balance")
	if !c.eval(`document.querySelectorAll("#chart-credits rect.bar").length >= 14 && document.querySelectorAll("#chart-usage rect.bar").length >= 14`) {
		t.Error("Balance does not chart credits per day")
	}
	c.shot("balance")

	// On a phone the navigation shows that it scrolls.
	c.do("phone width", chromedp.EmulateViewport(390, 800))
	if !c.eval(`(() => { const sc = document.querySelector("nav.tabs .scroller"), cs = getComputedStyle(sc);
		return sc.scrollWidth > sc.clientWidth && cs.backgroundAttachment.includes("local") && cs.backgroundAttachment.includes("scroll") &&
			(cs.backgroundImage.match(/radial-gradient/g) || []).length === 2; })()`) {
		t.Error("on a phone the navigation scrolls without a shadow that says so")
	}
	if got := result(c, "the phone's navigation", chromedp.Evaluate[string](navProblems+"(false)")); !strings.HasSuffix(got, ":") {
		t.Errorf("the navigation on a phone: %s", got)
	}
	// A message list on a phone is compact rows.
	c.open("/messages?environment=live")
	heights := result(c, "row heights", chromedp.Evaluate[[]float64](`Array.from(document.querySelectorAll("#messages-table tbody tr")).map((r) => r.getBoundingClientRect().height)`))
	if len(heights) < 20 {
		t.Fatalf("%d rows in the message list", len(heights))
	}
	for _, h := range heights {
		if h > 64 {
			t.Errorf("a message's row on a phone is %g px high, want two lines (at most 64)", h)
			t.Log(result(c, "debug", chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#messages-table tbody tr")).filter((r) => r.getBoundingClientRect().height > 64).slice(0,2).map((r) => Array.from(r.children).map((d) => d.className + "@" + Math.round(d.getBoundingClientRect().top) + "/" + Math.round(d.getBoundingClientRect().height) + "/" + Math.round(d.getBoundingClientRect().width) + ":" + d.textContent.trim()).join(" | ")).join("\n")`)))
			break
		}
	}
	c.do("desktop width", chromedp.EmulateViewport(1280, 800))
	c.shot("messages")

	c.open("/replies")
	if main := c.text("main"); !strings.Contains(main, "Can we make it 20:30?") || !strings.Contains(main, "Who is this?") ||
		!strings.Contains(main, "no message in the 30 days before") {
		t.Fatalf("the replies page: %q", main)
	}
	c.shot("replies")
	c.press(fmt.Sprintf(`#replies-table a[href="/messages/%s"]`, asked))
	c.wantHeading("a reply's message", "Message")
	if txt := c.text("section[aria-labelledby=replies]"); !strings.Contains(txt, "Can we make it 20:30?") || !strings.Contains(txt, "Thanks — see you then") ||
		strings.Contains(txt, "Who is this?") {
		t.Fatalf("the message's replies: %q", txt)
	}
	if !strings.Contains(c.text(".facts"), "not charged") {
		t.Error("a test message does not say it was not charged")
	}
	c.shot("message")

	c.open("/settings/smpp")
	for _, want := range []string{"bind_transceiver from 203.0.113.10", "Refused binds (1)", "Refused submits (2)", "wrong password",
		"over the account's send rate limit", "198.51.100.23"} {
		if !strings.Contains(c.text("main"), want) {
			t.Errorf("the SMPP page lacks %q", want)
		}
	}
	c.shot("smpp")
	c.logout()

	// The operator, in an account: every entry of the navigation on
	// screen at 1280 px.
	c.login(op)
	c.open("/settings/keys?account=" + e.account.ID)
	got := result(c, "the operator's navigation", chromedp.Evaluate[string](navProblems+"(true)"))
	if got != "23:" {
		t.Fatalf("the operator's navigation at 1280 px (links:problems): %s", got)
	}
	c.do("open the settings menu", chromedp.Click(chromedp.CSS("nav.tabs details summary")))
	c.shot("operator-nav")
	c.open("/operator")
	if !c.eval(`document.querySelectorAll("#chart-traffic rect.bar.s1").length >= 10 && document.querySelectorAll("#chart-traffic rect.bar.s2").length >= 10`) {
		t.Error("the operators' home does not chart traffic across accounts")
	}
	if legend := c.text("#chart-traffic .legend"); !strings.Contains(legend, "Acme") || !strings.Contains(legend, "Globex") {
		t.Errorf("the traffic chart's legend: %q", legend)
	}
	c.shot("operator")
	c.open("/operator/routes")
	if !c.eval(`document.querySelector("#chart-margins svg title").textContent.startsWith("Margin per day")`) {
		t.Error("Routes has no margin per day")
	}
	c.shot("routes")
}
