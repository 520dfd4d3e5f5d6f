package app

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
)

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
