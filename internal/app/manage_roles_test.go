package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/user"
)

// Every management operation, called by every role: the roles that reach
// the operation's minimum succeed, the others get 403 FORBIDDEN. The role
// is checked on the server whatever the panel shows.
func TestManageRoleMatrix(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		roles := []string{user.Viewer, user.Developer, user.Admin, user.Owner, user.Operator}
		tokens := map[string]string{}
		for _, r := range roles {
			tokens[r] = e.member(r)
		}
		s := send(t, e, e.testKey, map[string]any{"to": "5511999990010", "message": "hi", "type": "SMS", "callbackUrl": e.hooks.url()})
		mid := s.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		var evs []domain.Event
		polltest.For(t, "an event", 10*time.Second, func() bool {
			evs, _ = e.st.EventsForMessage(ctx, e.account.ID, mid)
			return len(evs) > 0
		})
		ops := roleOps(t, e, mid, evs[0].ID)
		rank := map[string]int{user.Viewer: 1, user.Developer: 2, user.Admin: 3, user.Owner: 4, user.Operator: 5}
		for _, op := range ops {
			for _, role := range roles {
				path := op.path()
				if role == user.Operator {
					path += map[bool]string{false: "?", true: "&"}[strings.Contains(path, "?")] + "account=" + e.account.ID
				}
				var body any
				if op.body != nil {
					body = op.body()
				}
				r := e.mg(op.method, path, tokens[role], body)
				name := fmt.Sprintf("%s %s as %s", op.method, path, role)
				if rank[role] >= rank[op.min] {
					if r.status < 200 || r.status > 299 {
						t.Errorf("%s: %d %s", name, r.status, r.body)
					}
					continue
				}
				if r.status != 403 || r.json(t)["code"] != "FORBIDDEN" {
					t.Errorf("%s: %d %s, want 403 FORBIDDEN", name, r.status, r.body)
				}
			}
		}
	})
}

// roleOp is a management operation and the least role that may call it.
type roleOp struct {
	min    string
	method string
	path   func() string
	body   func() any
}

// roleOps lists every management operation; each call of path or body
// makes what the call needs afresh (a key to revoke, a request to decide).
func roleOps(t *testing.T, e *env, mid, eventID string) []roleOp {
	ctx := context.Background()
	n := 0
	fresh := func() int { n++; return n }
	newKey := func() string {
		_, rec := e.addKey(e.account.ID, "test")
		return rec.ID
	}
	newSender := func() string {
		sd, err := console(e.st, e.clock.Now()).AddSender(ctx, manage.Console, e.account.ID,
			manage.NewSender{Channel: "SMS", Value: fmt.Sprintf("Old%d", fresh())})
		if err != nil {
			t.Fatal(err)
		}
		return sd.ID
	}
	newRequest := func() string {
		r := domain.LimitRequest{ID: id.New(id.Limit, e.clock.Now()), AccountID: e.account.ID, RequestedBy: "a@acme.example",
			Status: domain.LimitPending, MonthlyVolume: 10, UseCase: "x", Justification: "x", CreatedAt: e.clock.Now()}
		if err := e.st.CreateLimitRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	newUser := func() string {
		u, _, err := createTestUser(ctx, e.st, e.account.ID, fmt.Sprintf("gone%d@acme.example", fresh()), user.Viewer, testPassword, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		return u.ID
	}
	newOptOut := func() string {
		number := fmt.Sprintf("55119988%05d", fresh())
		if _, _, err := console(e.st, e.clock.Now()).AddOptOut(ctx, manage.Console, e.account.ID, "test", number); err != nil {
			t.Fatal(err)
		}
		return number
	}
	newTwilioSid := func() string {
		c, err := console(e.st, e.clock.Now()).CreateTwilioCredential(ctx, manage.Console, e.account.ID,
			manage.NewTwilioCredential{Environment: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return c.Sid
	}
	const m = "/api/v1/manage"
	return []roleOp{
		{user.Viewer, "GET", func() string { return m + "/opt-outs" }, nil},
		{user.Admin, "POST", func() string { return m + "/opt-outs" }, func() any {
			return map[string]any{"phone": fmt.Sprintf("55119977%05d", fresh()), "environment": "test"}
		}},
		{user.Admin, "DELETE", func() string { return m + "/opt-outs/" + newOptOut() + "?environment=test" }, nil},
		{user.Viewer, "GET", func() string { return m + "/compliance" }, nil},
		{user.Admin, "PUT", func() string { return m + "/compliance" }, func() any { return map[string]any{"retentionDays": 30} }},
		{user.Viewer, "GET", func() string { return m + "/keys" }, nil},
		{user.Developer, "POST", func() string { return m + "/keys" }, func() any { return map[string]any{"environment": "test"} }},
		{user.Developer, "DELETE", func() string { return m + "/keys/" + newKey() }, nil},
		{user.Viewer, "GET", func() string { return m + "/security/ip-allowlist" }, nil},
		{user.Admin, "PUT", func() string { return m + "/security/ip-allowlist" }, func() any { return map[string]any{"entries": []string{}} }},
		{user.Admin, "POST", func() string { return m + "/webhook-secret/rotate" }, nil},
		{user.Viewer, "GET", func() string { return m + "/senders" }, nil},
		{user.Admin, "POST", func() string { return m + "/senders" }, func() any {
			return map[string]any{"channel": "SMS", "value": fmt.Sprintf("New%d", fresh())}
		}},
		{user.Admin, "DELETE", func() string { return m + "/senders/" + newSender() }, nil},
		{user.Viewer, "GET", func() string { return m + "/limits" }, nil},
		{user.Viewer, "GET", func() string { return m + "/limit-requests" }, nil},
		{user.Admin, "POST", func() string { return m + "/limit-requests" }, func() any {
			return map[string]any{"monthlyVolume": 1000, "useCase": "Other", "justification": "growth"}
		}},
		{user.Operator, "POST", func() string { return m + "/limit-requests/" + newRequest() + "/approve" }, func() any { return map[string]any{} }},
		{user.Operator, "POST", func() string { return m + "/limit-requests/" + newRequest() + "/reject" }, func() any {
			return map[string]any{"reason": "not now"}
		}},
		{user.Viewer, "GET", func() string { return m + "/messages" }, nil},
		{user.Viewer, "GET", func() string { return m + "/messages/" + mid }, nil},
		{user.Viewer, "GET", func() string { return m + "/messages/" + mid + "/attempts" }, nil},
		{user.Developer, "POST", func() string { return m + "/events/" + eventID + "/redeliver" }, nil},
		{user.Viewer, "GET", func() string { return m + "/balance" }, nil},
		{user.Owner, "GET", func() string { return m + "/users" }, nil},
		{user.Owner, "POST", func() string { return m + "/users" }, func() any {
			return map[string]any{"email": fmt.Sprintf("new%d@acme.example", fresh()), "role": "viewer"}
		}},
		{user.Owner, "DELETE", func() string { return m + "/users/" + newUser() }, nil},
		{user.Operator, "GET", func() string { return m + "/accounts" }, nil},
		{user.Operator, "POST", func() string { return m + "/topups" }, func() any { return map[string]any{"amount": 1} }},
		{user.Developer, "GET", func() string { return m + "/twilio-credentials" }, nil},
		{user.Developer, "POST", func() string { return m + "/twilio-credentials" }, func() any { return map[string]any{"environment": "test"} }},
		{user.Developer, "GET", func() string { return m + "/twilio-credentials/" + newTwilioSid() }, nil},
		{user.Developer, "DELETE", func() string { return m + "/twilio-credentials/" + newTwilioSid() }, nil},
	}
}
