package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/smppserver/esmetest"
)

// childAccount stores an account under parent (made directly in the
// store: creating children is another area's), with credits.
func (e *env) childAccount(name, parent string, credits float64) domain.Account {
	e.t.Helper()
	ctx := context.Background()
	now := e.clock.Now()
	a := domain.Account{ID: id.New(id.Account, now), Name: name, Tier: "enterprise", Currency: "USD", CountryCode: "55",
		WebhookSecret: "whsec_" + name, WAQualityTier: 1, CreatedAt: now, ParentID: parent, Reseller: true}
	if err := e.st.CreateAccount(ctx, a); err != nil {
		e.t.Fatal(err)
	}
	if credits > 0 {
		c, err := ledger.FromCredits(credits)
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := bootstrap.AddCredits(ctx, e.st, a.ID, c, ledger.TopUp, "opening balance", now); err != nil {
			e.t.Fatal(err)
		}
	}
	return a
}

// ownerOf adds an owner to an account and logs them in.
func (e *env) ownerOf(accountID, email string) string {
	e.t.Helper()
	if _, _, err := createTestUser(context.Background(), e.st, accountID, email, "owner", testPassword, e.clock.Now()); err != nil {
		e.t.Fatal(err)
	}
	return e.login(email, testPassword)
}

// TestSuspendSubtreeEndToEnd: a reseller suspends its child; the child
// and its own child are refused on the REST API, the Twilio front and
// SMPP (the open bind closed), the child's scheduled message is held past
// its time while a sibling's goes out, and it goes out on resume. A
// sibling, another tree and the child itself cannot reach the action.
func TestSuspendSubtreeEndToEnd(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := smppEnv(t, d)
		reseller := e.childAccount("reseller", "", 1000) // a child's send is charged to it too
		child := e.childAccount("child", reseller.ID, 100)
		grandchild := e.childAccount("grandchild", child.ID, 100)
		sibling := e.childAccount("sibling", reseller.ID, 100)
		other := e.childAccount("other", "", 0)
		childKey, _ := e.addKey(child.ID, "live")
		grandKey, _ := e.addKey(grandchild.ID, "live")
		siblingKey, _ := e.addKey(sibling.ID, "live")
		twilioLogin := e.addTwilioLogin(child.ID, domain.Live)
		sys, pw := e.smppUser(child.ID, "live", "child")
		bind := e.dialBound(pdu.BindTransceiver, sys, pw)

		resellerOwner := e.ownerOf(reseller.ID, "owner@reseller.example")
		siblingOwner := e.ownerOf(sibling.ID, "owner@sibling.example")
		otherOwner := e.ownerOf(other.ID, "owner@other.example")
		childOwner := e.ownerOf(child.ID, "owner@child.example")
		suspend := "/api/v1/manage/accounts/" + child.ID + "/suspend"
		resume := "/api/v1/manage/accounts/" + child.ID + "/resume"
		for _, c := range []struct{ who, token, path string }{
			{"a sibling", siblingOwner, suspend},
			{"another tree", otherOwner, suspend},
			{"the account itself", childOwner, suspend},
			{"a child reaching for its parent", childOwner, "/api/v1/manage/accounts/" + reseller.ID + "/suspend"},
			{"the grandparent", resellerOwner, "/api/v1/manage/accounts/" + grandchild.ID + "/suspend"},
		} {
			wantProblem(t, c.who, e.mg("POST", c.path, c.token, nil), 404, "NOT_FOUND")
		}

		// A message scheduled before the suspension, and a sibling's at the
		// same time as the witness that the dispatcher passed that time.
		at := e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		held := messageID(t, send(t, e, childKey.Secret, map[string]any{"to": "5511999990000", "message": "held", "type": "SMS", "scheduledAt": at}))
		short := messageID(t, send(t, e, childKey.Secret, map[string]any{"to": "5511999990008", "message": "short-lived", "type": "SMS",
			"scheduledAt": at, "validity": 60}))
		witness := messageID(t, send(t, e, siblingKey.Secret, map[string]any{"to": "5511999990006", "message": "on time", "type": "SMS", "scheduledAt": at}))

		r := e.mg("POST", suspend, resellerOwner, nil)
		if b := r.json(t); r.status != 200 || b["suspended"] != true || b["suspendedBy"] != child.ID || b["parentId"] != reseller.ID {
			t.Fatalf("suspend: %d %s", r.status, r.body)
		}
		for _, k := range []struct{ who, key string }{{"the child", childKey.Secret}, {"its child", grandKey.Secret}} {
			wantProblem(t, k.who+"'s balance", e.do("GET", "/api/v1/integration/balance", k.key, nil), 403, "ACCOUNT_SUSPENDED")
			wantProblem(t, k.who+"'s send", send(t, e, k.key, map[string]any{"to": "5511999990007", "message": "no", "type": "SMS"}),
				403, "ACCOUNT_SUSPENDED")
		}
		wantProblem(t, "the child's owner", e.mg("GET", "/api/v1/manage/balance", childOwner, nil), 403, "ACCOUNT_SUSPENDED")
		b := e.browser()
		b.login("owner@child.example")
		if p := b.get("/settings/keys"); p.status != 403 || !strings.Contains(p.body, "Account suspended") {
			t.Fatalf("the panel for the child's owner: %d %s", p.status, p.body)
		}
		if r := e.do("GET", "/api/v1/integration/balance", siblingKey.Secret, nil); r.status != 200 {
			t.Fatalf("the sibling: %d %s", r.status, r.body)
		}
		if status, b := e.twilio("GET", "/2010-04-01/Accounts/"+twilioLogin.sid+"/Messages.json", twilioLogin, nil); status != 403 || b["code"] != 10001.0 {
			t.Fatalf("the Twilio front: %d %v", status, b)
		}
		for {
			if _, err := bind.Read(); err != nil {
				break // closed by the server
			}
		}
		if st := esmetest.Dial(t, e.srv.SMPPAddr(), nil).Bind(pdu.BindTransceiver, sys, pw); st != pdu.StatusBindFail {
			t.Fatalf("a bind of the suspended account: %s", st)
		}

		e.clock.Advance(2 * time.Hour)
		finalStatus(t, e, siblingKey.Secret, witness, "DELIVERED")
		m, err := e.st.MessageByID(context.Background(), held)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != domain.Sending || m.ProviderRef != "" || m.Attempts != 0 || m.LeaseOwner != "" {
			t.Fatalf("the held message moved: %s (%q) after %d attempts, leased to %q", m.Status, m.ProviderRef, m.Attempts, m.LeaseOwner)
		}

		// Its validity ended while held: expired (and refunded) as it would
		// have been without the suspension, not kept for the resume.
		polltest.For(t, "the held message past its validity to expire", 10*time.Second, func() bool {
			m, err := e.st.MessageByID(context.Background(), short)
			return err == nil && m.Status == domain.Failed && m.ErrorCode == domain.CodeExpired && m.Charged == 0
		})

		if r := e.mg("POST", resume, resellerOwner, nil); r.status != 200 || r.json(t)["suspended"] != false {
			t.Fatalf("resume: %d %s", r.status, r.body)
		}
		finalStatus(t, e, childKey.Secret, held, "DELIVERED")
		if r := e.do("GET", "/api/v1/integration/balance", grandKey.Secret, nil); r.status != 200 {
			t.Fatalf("the grandchild after the resume: %d %s", r.status, r.body)
		}
		e.dialBound(pdu.BindTransceiver, sys, pw)
	})
}

func messageID(t *testing.T, r response) string {
	t.Helper()
	if r.status != 202 {
		t.Fatalf("send: %d %s", r.status, r.body)
	}
	id, _ := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
	if !strings.HasPrefix(id, "msg_") {
		t.Fatalf("send answered %s", r.body)
	}
	return id
}
