package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider/smpp/smpptest"
)

// An SMPP carrier that writes numbers with a "+" (or the "00" prefix):
// replies to a number an account holds are that account's, even when
// another account wrote to the phone last; a STOP opts the phone out of
// the holder's messages only; the reply's event carries the phone as
// digits. Before the SMPP inbound path read addresses as the HTTP ones do,
// the "+" form matched no sender and the reply went to the last writer.
func TestSMPPRepliesMatchNumbersInEveryForm(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		smsc := smpptest.Start(t)
		e := newEnv(t, d, envOptions{poll: 20 * time.Millisecond, config: func(c *config.Config) {
			c.Dev = false
			c.SMPPAddr, c.SMPPSystemID, c.SMPPPassword = smsc.Addr(), "msgsvc", "secret"
		}})
		ctx := context.Background()
		polltest.For(t, "the SMSC bound", 10*time.Second, func() bool { return smsc.Binds() > 0 })
		op := e.member("operator")
		b := e.addAccount(NewAccount{Name: "Beta", Tier: "enterprise", Credits: 50, Currency: "EUR", Country: "44"})
		blk, _ := e.addKey(b.ID, "live")
		const number = "15550001111"
		if r := e.mg("POST", "/api/v1/manage/senders?account="+b.ID, op, map[string]any{"channel": "SMS", "value": number}); r.status != 201 {
			t.Fatalf("B's number: %d %s", r.status, r.body)
		}
		// A is the last account to write to either phone.
		phones := []struct{ phone, from, to string }{
			{"46700000031", "+46700000031", "+" + number},
			{"46700000032", "0046700000032", "00" + number},
		}
		for _, p := range phones {
			finalStatus(t, e, e.liveKey, msgID(t, send(t, e, e.liveKey, map[string]any{"to": p.phone, "message": "from A", "type": "SMS"}), 0), "DELIVERED")
		}
		for i, p := range phones {
			ton := smpp1
			if i == 1 {
				ton = smpp0
			}
			if !smsc.Deliver(p.from, ton, p.to, ton, "hello") {
				t.Fatal("nothing bound to deliver to")
			}
			polltest.For(t, "the reply from "+p.from+" recorded", 10*time.Second, func() bool {
				at, _ := e.st.LastInbound(ctx, b.ID, domain.Live, p.phone, domain.SMS)
				return !at.IsZero()
			})
			if at, _ := e.st.LastInbound(ctx, e.account.ID, domain.Live, p.phone, domain.SMS); !at.IsZero() {
				t.Fatalf("the reply to %s also went to A", p.to)
			}
			evs, _ := readFeed(t, e, blk.Secret, "", 100)
			if got := eventsOf(evs, "", p.phone); len(got) != 1 {
				t.Fatalf("B's events for %s: %v (the phone must be digits)", p.phone, evs)
			}
		}
		// A STOP in the "+" form opts the phone out of B's messages, not A's.
		if !smsc.Deliver("+46700000031", smpp1, "+"+number, smpp1, "STOP") {
			t.Fatal("nothing bound to deliver to")
		}
		polltest.For(t, "the STOP recorded for B", 10*time.Second, func() bool {
			opted, _ := e.st.OptedOut(ctx, b.ID, domain.Live, []string{"46700000031"})
			return opted["46700000031"]
		})
		if opted, _ := e.st.OptedOut(ctx, e.account.ID, domain.Live, []string{"46700000031"}); opted["46700000031"] {
			t.Fatal("the STOP to B's number opted the phone out of A's messages")
		}
		if r := send(t, e, blk.Secret, map[string]any{"to": "46700000031", "message": "x", "type": "SMS"}); r.status != 422 ||
			problemCode(t, r) != "RECIPIENT_OPTED_OUT" {
			t.Fatalf("B sends to the phone that stopped it: %d %s", r.status, r.body)
		}
		if r := send(t, e, e.liveKey, map[string]any{"to": "46700000031", "message": "x", "type": "SMS"}); r.status != 202 {
			t.Fatalf("A may still send: %d %s", r.status, r.body)
		}
	})
}

// SMPP's types of number as the test's carrier marks its addresses.
const (
	smpp0 byte = 0 // unknown
	smpp1 byte = 1 // international
)

// Numbers in E.164 form (one leading "+") are accepted on every front and
// kept as digits: a send's to and recipients, the messages list's filter,
// a test reply's from, and the operator's route simulation. "+447…" and
// "447…" are one number.
func TestE164NumbersAccepted(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	const number = "5511999990051"
	r := send(t, e, e.testKey, map[string]any{"to": "+" + number, "message": "hi", "type": "SMS"})
	if r.status != 202 {
		t.Fatalf("send to +%s: %d %s", number, r.status, r.body)
	}
	mid := msgID(t, r, 0)
	if got := e.do("GET", "/api/v1/integration/messages/"+mid, e.testKey, nil).json(t); got["to"] != number {
		t.Fatalf("the message's to is %v, want the digits", got["to"])
	}
	if l := e.do("GET", "/api/v1/integration/messages?to=%2B"+number, e.testKey, nil); l.status != 200 ||
		len(l.json(t)["messages"].([]any)) != 1 {
		t.Fatalf("list by +number: %d %s", l.status, l.body)
	}
	r = send(t, e, e.testKey, map[string]any{"recipients": []string{"+5511999990052", "5511999990053"}, "message": "hi", "type": "SMS"})
	if r.status != 202 {
		t.Fatalf("batch with a + number: %d %s", r.status, r.body)
	}
	r = send(t, e, e.testKey, map[string]any{"recipients": []string{"+5511999990052", "5511999990052"}, "message": "hi", "type": "SMS"})
	if f := fieldsOf(t, r); r.status != 400 || len(f) != 1 || f[0] != "recipients[1]" {
		t.Fatalf("a number given twice, with and without +: %d %s", r.status, r.body)
	}
	if ir := e.do("POST", "/api/v1/integration/test/replies", e.testKey, map[string]any{"from": "+" + number, "message": "STOP"}); ir.status != 202 {
		t.Fatalf("test reply from +%s: %d %s", number, ir.status, ir.body)
	}
	opted, _ := e.st.OptedOut(context.Background(), e.account.ID, domain.Test, []string{number})
	if !opted[number] {
		t.Fatal("the STOP from the + form did not opt the digits out")
	}
	op := e.member("operator")
	sim := e.mg("POST", "/api/v1/manage/routes/simulate", op, map[string]any{"to": "+46703000011", "type": "SMS", "account": e.account.ID})
	if sim.status != 200 {
		t.Fatalf("simulate to a + number: %d %s", sim.status, sim.body)
	}
	for _, bad := range []string{"++46703000011", "46+703000011", "+46 703000011"} {
		sim := e.mg("POST", "/api/v1/manage/routes/simulate", op, map[string]any{"to": bad, "type": "SMS", "account": e.account.ID})
		if f := fieldsOf(t, sim); sim.status != 400 || len(f) != 1 || f[0] != "to" {
			t.Fatalf("simulate to %q: %d %s", bad, sim.status, sim.body)
		}
	}
}

// Sender twins: B holds BetaShop and 15550001111. A's requests for the
// forms a person cannot tell apart are refused (400 on value), those that
// differ only in case are SENDER_TAKEN, and a twin requested before these
// rules is shown quoted on the operator page, and approving it is
// SENDER_TAKEN.
func TestSenderTwinsRefused(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		const m = "/api/v1/manage/senders"
		adminA, op := e.member("admin"), e.member("operator")
		b := e.addAccount(NewAccount{Name: "Beta", Tier: "enterprise", Credits: 50, Currency: "EUR", Country: "44"})
		// Requests A made before these rules (the store takes any form) wait
		// while B's values are approved.
		var stored []domain.Sender
		for _, v := range []string{"BetaShop ", "0015550001111"} {
			sd := domain.Sender{ID: "snd_twin" + strings.TrimSpace(v), AccountID: e.account.ID, Channel: domain.SMS, Value: v,
				Status: domain.SenderPending, CreatedAt: e.clock.Now()}
			if err := e.st.AddSender(ctx, sd); err != nil {
				t.Fatal(err)
			}
			stored = append(stored, sd)
		}
		for _, v := range []string{"BetaShop", "15550001111"} {
			if r := e.mg("POST", m+"?account="+b.ID, op, map[string]any{"channel": "SMS", "value": v}); r.status != 201 {
				t.Fatalf("B's %s: %d %s", v, r.status, r.body)
			}
		}
		for _, v := range []string{"BetaShop ", " BetaShop", "Beta  Shop", "0015550001111", "015550001111"} {
			for who, tok := range map[string]string{"A's admin": adminA, "an operator for A": op} {
				r := e.mg("POST", m+"?account="+e.account.ID, tok, map[string]any{"channel": "SMS", "value": v})
				if f := fieldsOf(t, r); r.status != 400 || problemCode(t, r) != "VALIDATION_ERROR" || len(f) != 1 || f[0] != "value" {
					t.Fatalf("%s asking for %q: %d %s", who, v, r.status, r.body)
				}
			}
		}
		wantProblem(t, "A asking for BETASHOP", e.mg("POST", m, adminA, map[string]any{"channel": "SMS", "value": "BETASHOP"}), 409, "SENDER_TAKEN")
		if got, _ := e.st.Senders(ctx, e.account.ID); len(got) != len(stored) {
			t.Fatalf("refused requests were recorded: %v", got)
		}
		for _, sd := range stored {
			wantProblem(t, "approving "+sd.Value, e.mg("POST", m+"/"+sd.ID+"/approve", op, nil), 409, "SENDER_TAKEN")
		}
		browser := e.browser()
		browser.login(e.user("operator"))
		page := browser.get("/operator").body
		if !strings.Contains(page, `&#34;BetaShop &#34;`) {
			t.Fatal(`the operator page does not show "BetaShop " quoted`)
		}
	})
}

// A message submitted over SMPP without a source_addr, from an account
// without a default sender, goes out from the route's own sender; its
// receipt is addressed to that sender (destination_addr), as digits, not
// left empty.
func TestSMPPReceiptOfTheRouteSender(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		smsc := smpptest.Start(t)
		e := newEnv(t, d, envOptions{poll: 20 * time.Millisecond, config: func(c *config.Config) { c.SMPPListen = "127.0.0.1:0" },
			file: fmt.Sprintf("providers:\n  - name: carrier\n    type: smpp\n    smpp: {addr: %s, systemId: msgsvc, password: secret, sourceAddr: \"+15550003333\"}\n"+
				"routes:\n  - {channel: SMS, countries: [\"46\"], primary: carrier}\n", smsc.Addr())})
		polltest.For(t, "the SMSC bound", 10*time.Second, func() bool { return smsc.Binds() > 0 })
		sys, pw := e.smppUser(e.account.ID, "live", "acmelive")
		c := e.dialBound(pdu.BindTransceiver, sys, pw)
		if r := c.Submit("", "46700000041", "Hello from the route", 1); r.Status != pdu.StatusOK {
			t.Fatalf("submit_sm: %s", r.Status)
		}
		sm := c.WaitDelivered(1)[0].Body.(*pdu.SM)
		if sm.ESMClass != 0x04 || sm.SourceAddr != "46700000041" || sm.DestAddr != "15550003333" {
			t.Fatalf("receipt: esm_class %#x from %q to %q; want to the route's sender 15550003333", sm.ESMClass, sm.SourceAddr, sm.DestAddr)
		}
	})
}
