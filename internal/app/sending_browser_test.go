package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/user"
)

// TestSendingInChromium walks a developer through sending from the panel:
// the send form, a campaign from a CSV file checked with a dry run (its
// cost and the rows left out) and sent, its progress and per-recipient
// status, and the cancel of a scheduled campaign, which refunds it. A
// viewer sees no send form.
func TestSendingInChromium(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	c := newChrome(t, e)
	ctx := context.Background()
	now := e.clock.Now()
	if err := e.st.AddSender(ctx, domain.Sender{ID: id.New("snd", now), AccountID: e.account.ID, Channel: domain.SMS, Value: "MyShop",
		Default: true, RequestedBy: "console", DecidedBy: "console", CreatedAt: now, DecidedAt: now}); err != nil {
		t.Fatal(err)
	}
	c.login(e.user(user.Developer))

	// The send form: one test message, shown with its link and price.
	c.open("/send")
	c.wantHeading("send page", "Send a message")
	c.fill("#to", "5511999990000")
	c.fill("#text", "Your table is ready.")
	if st := c.press("form[action='/send'] button[type=submit]"); st != 202 {
		t.Fatalf("send form: %d", st)
	}
	if got := c.text(".created"); !strings.Contains(got, "1 message accepted") || !strings.Contains(got, "not charged") {
		t.Fatalf("send result: %q", got)
	}
	c.shot("panel-send")
	before := e.balanceOf(e.account.ID)

	// A campaign from a file, test environment: the dry run first.
	file := filepath.Join(t.TempDir(), "recipients.csv")
	if err := os.WriteFile(file, []byte(campaignCSV(61, 7)), 0o644); err != nil {
		t.Fatal(err)
	}
	c.open("/campaigns/new")
	c.wantHeading("composer", "Campaign from a file")
	c.do("choose the file", chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{file}))
	c.fill("#text", "Hi {{name}}, your order is ready.")
	c.do("dry run", chromedp.Click(chromedp.CSS("#check")))
	polltest.For(t, "the dry run", 10*time.Second, func() bool { return c.eval(`!!document.querySelector("#dryrun, #problems")`) })
	if c.eval(`!!document.querySelector("#problems")`) {
		t.Fatalf("dry run refused: %s", c.text("#problems"))
	}
	if r, rej := c.text("#dry-recipients"), c.text("#dry-rejected"); r != "60" || rej != "1" {
		t.Fatalf("dry run: %s recipients, %s rejected", r, rej)
	}
	if got := c.text("#dryrun table"); !strings.Contains(got, "9") || !strings.Contains(got, "to") {
		t.Fatalf("rejected rows: %q", got)
	}
	if !strings.Contains(c.text("#columns"), "{{name}}") {
		t.Fatalf("columns: %q", c.text("#columns"))
	}
	if e.balanceOf(e.account.ID) != before || len(e.messagesOf(e.account.ID)) != 1 {
		t.Fatal("the dry run sent or charged")
	}
	c.shot("panel-campaign-new")

	// Sent, it opens its progress page; the simulator delivers it.
	if st := c.press("#send"); st != 200 {
		t.Fatalf("send campaign: %d", st)
	}
	c.wantNotice("campaign sent", "accepted")
	if got := c.text("#campaign-total"); got != "60" {
		t.Fatalf("campaign total %q", got)
	}
	cid := result(c, "campaign id", chromedp.Evaluate[string](`location.pathname.split("/").pop()`))
	// Every message ends but those the simulator keeps SENT (ending 0005).
	polltest.For(t, "the campaign's messages ended", 30*time.Second, func() bool {
		for _, m := range e.campaignMessages(e.account.ID, cid) {
			if m.Status == domain.Sending || m.Status == domain.Sent && !strings.HasSuffix(m.To, "0005") {
				return false
			}
		}
		return true
	})
	c.open("/campaigns/" + cid)
	if got := c.text(`[data-status="DELIVERED"]`); got == "0" {
		t.Fatalf("no delivered count shown")
	}
	if !strings.Contains(c.text("#recipient-list"), "Hi Ana0, your order is ready.") || !c.eval(`!!document.querySelector("#next-page")`) {
		t.Fatal("the recipients' list shows neither the texts nor a next page")
	}
	c.shot("panel-campaign")
	c.press("#next-page")
	if n := c.eval(`document.querySelectorAll("#recipient-list tbody tr").length === 10`); !n {
		t.Fatal("the second page does not hold the last 10 recipients")
	}
	if e.balanceOf(e.account.ID) != before {
		t.Fatal("a test campaign was charged")
	}

	// A live campaign scheduled for later is charged, then canceled and
	// refunded.
	c.open("/campaigns/new")
	c.do("choose the file", chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{file}))
	c.fill("#text", "Hi {{name}}")
	c.do("live", chromedp.SetValue(chromedp.CSS("#environment"), "live"))
	c.fill("#scheduledAt", e.clock.Now().Add(2*time.Hour).UTC().Format("2006-01-02T15:04"))
	if st := c.press("#send"); st != 200 {
		t.Fatalf("send live campaign: %d", st)
	}
	if got := e.balanceOf(e.account.ID); got != before-60*1_000_000 {
		t.Fatalf("balance %d after a live campaign of 60, want %d", got, before-60*1_000_000)
	}
	c.press("#cancel")
	c.wantNotice("cancel", "canceled")
	if got := c.text(`[data-status="CANCELED"]`); got != "60" {
		t.Fatalf("canceled count %q", got)
	}
	if got := e.balanceOf(e.account.ID); got != before {
		t.Fatalf("balance %d after the cancel, want %d", got, before)
	}

	// A viewer reads campaigns but gets no form to send.
	c.logout()
	c.login(e.user(user.Viewer))
	c.open("/send")
	if c.eval(`!!document.querySelector("form[action='/send']")`) || !strings.Contains(c.text("main"), "may read messages but not send") {
		t.Fatal("a viewer was offered the send form")
	}
	c.open("/campaigns/" + cid)
	if c.eval(`!!document.querySelector("#cancel")`) {
		t.Fatal("a viewer was offered the cancel")
	}
}
