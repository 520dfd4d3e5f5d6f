package app

import (
	"context"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// A sender is requested by an account's admin and decided by an operator;
// once approved it is that account's alone. A second account can neither
// ask for it (case-insensitively), nor approve, withdraw or see it, nor
// send from it, nor receive the replies and STOPs sent to it, even when it
// was the last to write to the phone that answers.
func TestSendersHeldByOneAccount(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		const m = "/api/v1/manage/senders"
		adminA, op := e.member("admin"), e.member("operator")
		other := e.addAccount(NewAccount{Name: "Other", Tier: "enterprise", Credits: 50, Currency: "EUR", Country: "44"})
		otk, _ := e.addKey(other.ID, "test")
		olk, _ := e.addKey(other.ID, "live")
		if _, _, err := createTestUser(ctx, e.st, other.ID, "admin@other.example", "admin", testPassword, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		adminB := e.login("admin@other.example", testPassword)

		// A asks; the request is pending and cannot be used yet.
		r := e.mg("POST", m, adminA, map[string]any{"channel": "SMS", "value": "MyShop", "default": true})
		shop := r.json(t)
		if r.status != 201 || shop["status"] != "PENDING" || shop["reason"] != nil {
			t.Fatalf("request: %d %s", r.status, r.body)
		}
		s := send(t, e, e.testKey, map[string]any{"to": "5511999990010", "message": "hi", "type": "SMS", "from": "MyShop"})
		if f := fieldsOf(t, s); s.status != 400 || len(f) != 1 || f[0] != "from" {
			t.Fatalf("a pending sender sends: %d %s", s.status, s.body)
		}
		// Only an operator decides, and B does not even find A's request.
		shopPath := m + "/" + shop["id"].(string)
		wantProblem(t, "A approving its own", e.mg("POST", shopPath+"/approve", adminA, nil), 403, "FORBIDDEN")
		wantProblem(t, "B approving A's", e.mg("POST", shopPath+"/approve", adminB, nil), 403, "FORBIDDEN")
		wantProblem(t, "B rejecting A's", e.mg("POST", shopPath+"/reject", adminB, map[string]any{"reason": "x"}), 403, "FORBIDDEN")
		wantProblem(t, "B withdrawing A's", e.mg("DELETE", shopPath, adminB, nil), 404, "NOT_FOUND")
		pending := e.mg("GET", m, op, nil).json(t)["senders"].([]any)
		if len(pending) != 1 || pending[0].(map[string]any)["accountId"] != e.account.ID {
			t.Fatalf("the operator's queue: %v", pending)
		}
		if r := e.mg("POST", shopPath+"/approve", op, map[string]any{}); r.status != 200 || r.json(t)["status"] != "APPROVED" {
			t.Fatalf("approve: %d %s", r.status, r.body)
		}
		wantProblem(t, "approving twice", e.mg("POST", shopPath+"/approve", op, nil), 400, "VALIDATION_ERROR")
		s = send(t, e, e.testKey, map[string]any{"to": "5511999990010", "message": "hi", "type": "SMS"})
		mid := s.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		if got := e.do("GET", "/api/v1/integration/messages/"+mid, e.testKey, nil).json(t); got["from"] != "MyShop" {
			t.Fatalf("A's approved default is not used: %v", got["from"])
		}

		// B cannot ask for it in any case, nor get it approved, nor send from it.
		wantProblem(t, "B asking for MYSHOP", e.mg("POST", m, adminB, map[string]any{"channel": "SMS", "value": "MYSHOP"}), 409, "SENDER_TAKEN")
		wantProblem(t, "an operator giving B myshop", e.mg("POST", m+"?account="+other.ID, op, map[string]any{"channel": "SMS", "value": "myshop"}),
			409, "SENDER_TAKEN")
		if got := e.mg("GET", m, adminB, nil).json(t)["senders"].([]any); len(got) != 0 {
			t.Fatalf("B sees senders: %v", got)
		}
		for _, from := range []string{"MyShop", "myshop"} {
			s := send(t, e, otk.Secret, map[string]any{"to": "5511999990010", "message": "hi", "type": "SMS", "from": from})
			if f := fieldsOf(t, s); s.status != 400 || len(f) != 1 || f[0] != "from" {
				t.Fatalf("B sends from %s: %d %s", from, s.status, s.body)
			}
		}

		// An operator gives A a number at once; B wrote last to the phone
		// that answers it, yet the reply and its STOP are A's.
		const number, phone = "15550008888", "5511999990077"
		r = e.mg("POST", m+"?account="+e.account.ID, op, map[string]any{"channel": "SMS", "value": number})
		if r.status != 201 || r.json(t)["status"] != "APPROVED" {
			t.Fatalf("operator's sender: %d %s", r.status, r.body)
		}
		wantProblem(t, "B asking for A's number", e.mg("POST", m, adminB, map[string]any{"channel": "SMS", "value": number}), 409, "SENDER_TAKEN")
		s = send(t, e, olk.Secret, map[string]any{"to": phone, "message": "from B", "type": "SMS"})
		if s.status != 202 {
			t.Fatalf("B's live send: %d %s", s.status, s.body)
		}
		bmid := s.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		polltest.For(t, "B's message handed over", 10*time.Second, func() bool {
			msg, err := e.st.MessageByID(ctx, bmid)
			return err == nil && msg.Provider != ""
		})
		msg, _ := e.st.MessageByID(ctx, bmid)
		if _, err := e.srv.tracker.Receive(ctx, msg.Provider, provider.Inbound{From: phone, To: number, Channel: domain.SMS,
			Body: "STOP", Ref: "in-1", At: e.clock.Now()}); err != nil {
			t.Fatal(err)
		}
		optedA, _ := e.st.OptedOut(ctx, e.account.ID, domain.Live, []string{phone})
		optedB, _ := e.st.OptedOut(ctx, other.ID, domain.Live, []string{phone})
		if !optedA[phone] || optedB[phone] {
			t.Fatalf("STOP to A's number opted out A %v, B %v; want A only", optedA[phone], optedB[phone])
		}

		// B's pending request for a number owns nothing: a STOP to it from a
		// phone nobody wrote to is nobody's.
		r = e.mg("POST", m, adminB, map[string]any{"channel": "SMS", "value": "15550007777"})
		if r.status != 201 || r.json(t)["status"] != "PENDING" {
			t.Fatalf("B's request: %d %s", r.status, r.body)
		}
		const stranger = "5511999990078"
		if _, err := e.srv.tracker.Receive(ctx, msg.Provider, provider.Inbound{From: stranger, To: "15550007777", Channel: domain.SMS,
			Body: "STOP", Ref: "in-2", At: e.clock.Now()}); err != nil {
			t.Fatal(err)
		}
		if got, _ := e.st.OptedOut(ctx, other.ID, domain.Live, []string{stranger}); got[stranger] {
			t.Fatal("a pending sender took a STOP")
		}
		// Rejected with a reason B sees.
		bid := r.json(t)["id"].(string)
		wantProblem(t, "a reason is required", e.mg("POST", m+"/"+bid+"/reject", op, map[string]any{"reason": " "}), 400, "VALIDATION_ERROR")
		if r := e.mg("POST", m+"/"+bid+"/reject", op, map[string]any{"reason": "Not your number."}); r.status != 200 {
			t.Fatalf("reject: %d %s", r.status, r.body)
		}
		got := e.mg("GET", m, adminB, nil).json(t)["senders"].([]any)[0].(map[string]any)
		if got["status"] != domain.SenderRejected || got["reason"] != "Not your number." {
			t.Fatalf("B's rejected request: %v", got)
		}
	})
}

func TestSenders(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		for _, s := range []domain.Sender{
			{Channel: domain.SMS, Value: "Acme", Default: true},
			{Channel: domain.SMS, Value: "15550001111"},
			{Channel: domain.WhatsApp, Value: "15550002222", Default: true},
		} {
			s.ID, s.AccountID, s.CreatedAt = id.New(id.Sender, time.Now()), e.account.ID, time.Now()
			if err := e.st.AddSender(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		cases := []struct {
			name, typ, from string
			status          int
			want            any // the from echoed in the status query
		}{
			{"approved ID", "SMS", "15550001111", 202, "15550001111"},
			{"default when none given", "SMS", "", 202, "Acme"},
			{"not approved", "SMS", "Other", 400, nil},
			{"bad form: too long", "SMS", "ABCDEFGHIJKL", 400, nil},
			{"bad form: no letter", "SMS", "12 34", 400, nil},
			{"another channel's sender", "RCS", "Acme", 400, nil},
		}
		for _, c := range cases {
			body := map[string]any{"to": "5511999990010", "message": "hi", "type": c.typ}
			if c.from != "" {
				body["from"] = c.from
			}
			r := send(t, e, e.testKey, body)
			if r.status != c.status {
				t.Fatalf("%s: %d %s", c.name, r.status, r.body)
			}
			if c.status != 202 {
				if f := fieldsOf(t, r); len(f) != 1 || f[0] != "from" {
					t.Fatalf("%s: errors name %v, want from", c.name, f)
				}
				continue
			}
			mid := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
			m := e.do("GET", "/api/v1/integration/messages/"+mid, e.testKey, nil).json(t)
			if m["from"] != c.want {
				t.Fatalf("%s: from %v, want %v", c.name, m["from"], c.want)
			}
		}
		// Removing the default leaves sends to the route's own sender.
		list, err := e.st.Senders(ctx, e.account.ID)
		if err != nil || len(list) != 3 {
			t.Fatalf("senders %v %v", list, err)
		}
		for _, s := range list {
			if s.Value == "Acme" {
				if err := e.st.RemoveSender(ctx, e.account.ID, s.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		r := send(t, e, e.testKey, map[string]any{"to": "5511999990010", "message": "hi", "type": "SMS"})
		mid := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		if m := e.do("GET", "/api/v1/integration/messages/"+mid, e.testKey, nil).json(t); m["from"] != nil {
			t.Fatalf("from after removing the default: %v", m["from"])
		}
	})
}
