package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/smppserver/esmetest"
)

// Operators see each SMPP user's open binds, when it last bound and its
// refused binds, through the management API; another account sees and
// reaches none of them.
func TestSMPPRefusalsSeenByOperators(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := smppEnv(t, d)
		dev := e.member("developer")
		const path = "/api/v1/manage/smpp-users"
		r := e.mg("POST", path, dev, map[string]any{"environment": "test", "systemId": "acme"})
		if r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		created := r.json(t)
		pw := created["password"].(string)
		wantProblem(t, "a twin by case", e.mg("POST", path, dev, map[string]any{"environment": "live", "systemId": "ACME"}),
			400, "VALIDATION_ERROR")
		if st := esmetest.Dial(t, e.srv.SMPPAddr(), nil).Bind(pdu.BindTransmitter, "acme", "wrong"); st != pdu.StatusBindFail {
			t.Fatalf("wrong password: %s", st)
		}
		if st := esmetest.Dial(t, e.srv.SMPPAddr(), nil).Bind(pdu.BindTransceiver, "acme", pw); st != pdu.StatusOK {
			t.Fatalf("bind: %s", st)
		}
		list := e.mg("GET", path, dev, nil)
		users, _ := list.json(t)["smppUsers"].([]any)
		if list.status != 200 || len(users) != 1 {
			t.Fatalf("list: %d %s", list.status, list.body)
		}
		u := users[0].(map[string]any)
		binds, _ := u["binds"].([]any)
		refusals, _ := u["recentRefusals"].([]any)
		if len(binds) != 1 || len(refusals) != 1 || u["lastBoundAt"] == nil {
			t.Fatalf("binds, refusals, lastBoundAt: %s", list.body)
		}
		b := binds[0].(map[string]any)
		if b["type"] != "bind_transceiver" || b["address"] != "127.0.0.1" || b["since"] == nil || b["node"] == "" {
			t.Fatalf("bind %v", b)
		}
		rf := refusals[0].(map[string]any)
		if rf["command"] != "bind_transmitter" || rf["status"] != "ESME_RBINDFAIL" || rf["reason"] != "wrong password" ||
			rf["address"] != "127.0.0.1" || rf["at"] == nil {
			t.Fatalf("refusal %v", rf)
		}

		// Another account's admin sees none of it and reaches none of it.
		other, _ := otherAccount(t, e)
		if _, _, err := createTestUser(context.Background(), e.st, other.ID, "admin@other.example", "admin", testPassword,
			e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		theirs := e.login("admin@other.example", testPassword)
		if l := e.mg("GET", path, theirs, nil); l.status != 200 || strings.Contains(string(l.body), "smu_") ||
			strings.Contains(string(l.body), "wrong password") {
			t.Fatalf("the other account's list: %d %s", l.status, l.body)
		}
		wantProblem(t, "another account naming ours", e.mg("GET", path+"?account="+e.account.ID, theirs, nil), 403, "FORBIDDEN")
		wantProblem(t, "another account removing ours", e.mg("DELETE", path+"/"+created["id"].(string), theirs, nil), 404, "NOT_FOUND")
	})
}

// An account may have at most 20 SMPP users: another is refused with 409
// SMPP_USER_LIMIT_REACHED and nothing is made; the command line says so.
func TestSMPPUserLimit(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		dev := e.member("developer")
		const path = "/api/v1/manage/smpp-users"
		for i := range 20 {
			if r := e.mg("POST", path, dev, map[string]any{"environment": "test", "systemId": fmt.Sprintf("u%02d", i)}); r.status != 201 {
				t.Fatalf("user %d: %d %s", i, r.status, r.body)
			}
		}
		wantProblem(t, "a 21st SMPP user", e.mg("POST", path, dev, map[string]any{"environment": "test"}), 409, "SMPP_USER_LIMIT_REACHED")
		if users, _ := e.mg("GET", path, dev, nil).json(t)["smppUsers"].([]any); len(users) != 20 {
			t.Fatalf("%d users after the refusal", len(users))
		}
		if _, _, err := console(e.st, e.clock.Now()).CreateSMPPUser(context.Background(), manage.Console, e.account.ID,
			manage.NewSMPPUser{Environment: "test"}); err == nil || !strings.Contains(err.Error(), "SMPP users, the most it may have") {
			t.Fatalf("the console's 21st: %v", err)
		}
	})
}

// Settings → SMPP shows each user's open binds, its last bind and its
// recent refusals with their reasons, to the account's developers and to
// an operator naming the account.
func TestPanelSMPPRefusals(t *testing.T) {
	e := smppEnv(t, "sqlite")
	sys, pw := e.smppUser(e.account.ID, "test", "acme")
	if st := esmetest.Dial(t, e.srv.SMPPAddr(), nil).Bind(pdu.BindTransmitter, sys, "wrong"); st != pdu.StatusBindFail {
		t.Fatalf("wrong password: %s", st)
	}
	if st := esmetest.Dial(t, e.srv.SMPPAddr(), nil).Bind(pdu.BindReceiver, sys, pw); st != pdu.StatusOK {
		t.Fatalf("bind: %s", st)
	}
	dev := e.browser()
	dev.login(e.user("developer"))
	op := e.browser()
	op.login(e.user("operator"))
	for who, pg := range map[string]page{"developer": dev.get("/settings/smpp"),
		"operator": op.get("/settings/smpp?account=" + e.account.ID)} {
		for _, want := range []string{"Recent refusals", "bind_receiver from <span class=\"mono\">127.0.0.1</span>",
			"bind_transmitter", "ESME_RBINDFAIL", "wrong password"} {
			if pg.status != 200 || !strings.Contains(pg.body, want) {
				t.Fatalf("the %s's SMPP page (%d) lacks %q", who, pg.status, want)
			}
		}
	}
}
