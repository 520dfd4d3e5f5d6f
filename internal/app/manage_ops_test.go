package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// Limits and their requests, messages and webhooks, balance and the
// operators' view, through the management API on every dialect.

func TestManageLimitRequests(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		if err := e.st.SetLimits(context.Background(), e.account.ID, DefaultLimits("free")); err != nil {
			t.Fatal(err)
		}
		admin, viewer, owner, op := e.member("admin"), e.member("viewer"), e.member("owner"), e.member("operator")
		e.do("GET", "/api/v1/integration/balance", e.testKey, nil)
		lim := e.mg("GET", "/api/v1/manage/limits", viewer, nil)
		body := lim.json(t)
		limits := body["limits"].(map[string]any)
		usage := body["usage"].(map[string]any)
		if lim.status != 200 || body["tier"] != "enterprise" || limits["tierRpm"] != 10.0 || limits["sendRpm"] != 60.0 ||
			usage["tierRpm"] != 1.0 || usage["sendRpm"] != 0.0 || usage["resetAt"] == nil {
			t.Fatalf("limits: %d %s", lim.status, lim.body)
		}

		req := map[string]any{"monthlyVolume": 500000, "useCase": "One-time passwords", "justification": "Launch in Brazil.\nPeaks at 9am."}
		wantProblem(t, "a viewer requesting", e.mg("POST", "/api/v1/manage/limit-requests", viewer, req), 403, "FORBIDDEN")
		r := e.mg("POST", "/api/v1/manage/limit-requests", admin, map[string]any{"monthlyVolume": 0, "useCase": "", "justification": ""})
		if f := fieldsOf(t, r); r.status != 400 || strings.Join(f, ",") != "monthlyVolume,useCase,justification" {
			t.Fatalf("empty request: %d %s", r.status, r.body)
		}
		r = e.mg("POST", "/api/v1/manage/limit-requests", admin, req)
		lr := r.json(t)
		if r.status != 201 || lr["status"] != "PENDING" || lr["monthlyVolume"] != 500000.0 || lr["tier"] != nil || lr["decidedAt"] != nil {
			t.Fatalf("request: %d %s", r.status, r.body)
		}
		// Requests list by creation time; two made in the same millisecond
		// tie, so the second is made a millisecond later.
		e.clock.Advance(time.Millisecond)
		second := e.mg("POST", "/api/v1/manage/limit-requests", admin, req).json(t)
		if list, _ := e.mg("GET", "/api/v1/manage/limit-requests", viewer, nil).json(t)["limitRequests"].([]any); len(list) != 2 ||
			list[0].(map[string]any)["id"] != second["id"] {
			t.Fatalf("the account's requests, newest first: %v", list)
		}
		if list, _ := e.mg("GET", "/api/v1/manage/limit-requests", op, nil).json(t)["limitRequests"].([]any); len(list) != 2 ||
			list[0].(map[string]any)["id"] != lr["id"] {
			t.Fatalf("the operators' queue, oldest first: %v", list)
		}

		approve := "/api/v1/manage/limit-requests/" + lr["id"].(string) + "/approve"
		grant := map[string]any{"tier": "pro", "limits": map[string]any{"sendRpm": 120}}
		wantProblem(t, "an owner approving", e.mg("POST", approve, owner, grant), 403, "FORBIDDEN")
		r = e.mg("POST", approve, op, map[string]any{"tier": "platinum", "limits": map[string]any{"mediaRpm": -1}})
		if f := fieldsOf(t, r); r.status != 400 || strings.Join(f, ",") != "tier,limits.mediaRpm" {
			t.Fatalf("a bad grant: %d %s", r.status, r.body)
		}
		r = e.mg("POST", approve, op, grant)
		done := r.json(t)
		if r.status != 200 || done["status"] != "APPROVED" || done["tier"] != "pro" || done["decidedAt"] == nil ||
			done["limits"].(map[string]any)["tierRpm"] != 100.0 || done["limits"].(map[string]any)["sendRpm"] != 120.0 {
			t.Fatalf("approve: %d %s", r.status, r.body)
		}
		// The very next request runs under the new limits.
		b := e.do("GET", "/api/v1/integration/balance", e.testKey, nil)
		if b.header.Get("X-RateLimit-Limit") != "100" {
			t.Fatalf("after the approval the tier window is %s", b.header.Get("X-RateLimit-Limit"))
		}
		s := send(t, e, e.testKey, map[string]any{"to": "5511999990010", "message": "hi", "type": "SMS"})
		if s.header.Get("RateLimit-Limit") != "120" {
			t.Fatalf("after the approval the sending window is %s", s.header.Get("RateLimit-Limit"))
		}
		if got := e.mg("GET", "/api/v1/manage/limits", viewer, nil).json(t); got["tier"] != "pro" {
			t.Fatalf("limits after approval: %v", got)
		}
		if r := e.mg("POST", approve, op, grant); r.status != 400 {
			t.Fatalf("approving twice: %d %s", r.status, r.body)
		}

		reject := "/api/v1/manage/limit-requests/" + second["id"].(string) + "/reject"
		wantProblem(t, "an admin rejecting", e.mg("POST", reject, admin, map[string]any{"reason": "no"}), 403, "FORBIDDEN")
		if r := e.mg("POST", reject, op, map[string]any{"reason": " "}); r.status != 400 {
			t.Fatalf("reject without a reason: %d %s", r.status, r.body)
		}
		r = e.mg("POST", reject, op, map[string]any{"reason": "Send us your opt-in records first."})
		if rj := r.json(t); r.status != 200 || rj["status"] != "REJECTED" || rj["reason"] != "Send us your opt-in records first." || rj["tier"] != nil {
			t.Fatalf("reject: %d %s", r.status, r.body)
		}
		wantProblem(t, "approving an unknown request", e.mg("POST", "/api/v1/manage/limit-requests/lim_nope/approve", op, grant), 404, "NOT_FOUND")
		if list, _ := e.mg("GET", "/api/v1/manage/limit-requests", op, nil).json(t)["limitRequests"].([]any); len(list) != 0 {
			t.Fatalf("the queue after both decisions: %v", list)
		}
	})
}

func TestManageMessagesAndRedeliver(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		dev, viewer := e.member("developer"), e.member("viewer")
		var ids []string
		for _, to := range []string{"5511999990010", "5511999990020", "5511999990010"} {
			r := send(t, e, e.testKey, map[string]any{"to": to, "message": "hi", "type": "SMS", "callbackUrl": e.hooks.url(), "reference": "order-" + to[9:]})
			ids = append(ids, r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string))
		}
		live := send(t, e, e.liveKey, map[string]any{"to": "5511999990010", "message": "hi", "type": "SMS"})
		liveID := live.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		polltest.For(t, "deliveries", 10*time.Second, func() bool { return len(e.hooks.forMessage(ids[0])) >= 2 })

		search := func(q string) []string {
			t.Helper()
			r := e.mg("GET", "/api/v1/manage/messages"+q, viewer, nil)
			if r.status != 200 {
				t.Fatalf("search %s: %d %s", q, r.status, r.body)
			}
			var out []string
			for _, m := range r.json(t)["messages"].([]any) {
				out = append(out, m.(map[string]any)["messageId"].(string))
			}
			return out
		}
		if got := search(""); len(got) != 4 || got[0] != liveID {
			t.Fatalf("all, newest first: %v", got)
		}
		if got := search("?to=5511999990010&environment=test"); len(got) != 2 || got[0] != ids[2] || got[1] != ids[0] {
			t.Fatalf("by phone and environment: %v", got)
		}
		if got := search("?reference=order-0020"); len(got) != 1 || got[0] != ids[1] {
			t.Fatalf("by reference: %v", got)
		}
		if got := search("?createdFrom=2000-01-01T00:00:00Z&createdTo=2001-01-01T00:00:00Z"); len(got) != 0 {
			t.Fatalf("outside the dates: %v", got)
		}
		page := e.mg("GET", "/api/v1/manage/messages?limit=3", viewer, nil).json(t)
		cur, _ := page["nextCursor"].(string)
		if got := search("?limit=3&cursor=" + cur); len(got) != 1 || got[0] != ids[0] {
			t.Fatalf("second page: %v (cursor %q)", got, cur)
		}
		r := e.mg("GET", "/api/v1/manage/messages?status=LOST&environment=prod&createdFrom=yesterday", viewer, nil)
		if f := fieldsOf(t, r); r.status != 400 || strings.Join(f, ",") != "status,createdFrom,environment" {
			t.Fatalf("bad filters: %d %s", r.status, r.body)
		}

		detail := e.mg("GET", "/api/v1/manage/messages/"+ids[0], viewer, nil)
		dm := detail.json(t)
		hooks, _ := dm["webhooks"].([]any)
		if detail.status != 200 || dm["environment"] != "test" || len(dm["history"].([]any)) < 2 || len(hooks) < 2 {
			t.Fatalf("message detail: %d %s", detail.status, detail.body)
		}
		att := e.mg("GET", "/api/v1/manage/messages/"+ids[0]+"/attempts", viewer, nil)
		list, _ := att.json(t)["attempts"].([]any)
		if att.status != 200 || len(list) < 2 || list[0].(map[string]any)["statusCode"] != 204.0 {
			t.Fatalf("attempts: %d %s", att.status, att.body)
		}
		eventID := list[0].(map[string]any)["eventId"].(string)
		redeliver := "/api/v1/manage/events/" + eventID + "/redeliver"
		wantProblem(t, "a viewer redelivering", e.mg("POST", redeliver, viewer, nil), 403, "FORBIDDEN")
		before := countHooks(e, eventID)
		if r := e.mg("POST", redeliver, dev, nil); r.status != 202 {
			t.Fatalf("redeliver: %d %s", r.status, r.body)
		}
		polltest.For(t, "the redelivery", 10*time.Second, func() bool { return countHooks(e, eventID) == before+1 })
		polltest.For(t, "its attempt recorded", 10*time.Second, func() bool {
			l, _ := e.mg("GET", "/api/v1/manage/messages/"+ids[0]+"/attempts", viewer, nil).json(t)["attempts"].([]any)
			return len(l) == len(list)+1
		})
		wantProblem(t, "redelivering an unknown event", e.mg("POST", "/api/v1/manage/events/evt_nope/redeliver", dev, nil), 404, "NOT_FOUND")
		wantProblem(t, "an unknown message", e.mg("GET", "/api/v1/manage/messages/msg_nope", viewer, nil), 404, "NOT_FOUND")
	})
}

func countHooks(e *env, eventID string) int {
	n := 0
	for _, h := range e.hooks.all() {
		if h.id == eventID {
			n++
		}
	}
	return n
}

// One account never sees or changes another's data through the management
// API; operators work across accounts and name the one they mean.
func TestManageTenancy(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		other := e.addAccount(NewAccount{Name: "Other", Tier: "basic", Credits: 50, Currency: "EUR", Country: "44"})
		ok, okRec := e.addKey(other.ID, "test")
		s := send(t, e, ok.Secret, map[string]any{"to": "5511999990077", "message": "theirs", "type": "SMS", "callbackUrl": e.hooks.url()})
		if s.status != 202 {
			t.Fatalf("their send: %d %s", s.status, s.body)
		}
		theirMsg := s.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		var evs []domain.Event
		var err error
		polltest.For(t, "their webhook event", 10*time.Second, func() bool {
			evs, err = e.st.EventsForMessage(ctx, other.ID, theirMsg)
			return err == nil && len(evs) > 0
		})
		otherReq := domain.LimitRequest{ID: "lim_other", AccountID: other.ID, RequestedBy: "x@other.example", Status: domain.LimitPending,
			MonthlyVolume: 1, UseCase: "x", Justification: "x", CreatedAt: e.clock.Now()}
		if err := e.st.CreateLimitRequest(ctx, otherReq); err != nil {
			t.Fatal(err)
		}

		owner, op := e.member("owner"), e.member("operator")
		q := "?account=" + other.ID
		for _, c := range []struct{ method, path string }{
			{"GET", "/api/v1/manage/keys" + q}, {"POST", "/api/v1/manage/keys" + q},
			{"PUT", "/api/v1/manage/security/ip-allowlist" + q}, {"POST", "/api/v1/manage/webhook-secret/rotate" + q},
			{"GET", "/api/v1/manage/limits" + q}, {"GET", "/api/v1/manage/senders" + q},
		} {
			var body any
			switch c.method {
			case "POST":
				body = map[string]any{"environment": "test"}
			case "PUT":
				body = map[string]any{"entries": []string{"203.0.113.7"}}
			}
			wantProblem(t, "an owner naming another account: "+c.method+" "+c.path, e.mg(c.method, c.path, owner, body), 403, "FORBIDDEN")
		}
		// The reads a reseller makes of its subtree (messages, balance)
		// answer any account outside it as unknown.
		for _, c := range []struct{ method, path string }{
			{"GET", "/api/v1/manage/messages" + q}, {"GET", "/api/v1/manage/balance" + q},
			{"DELETE", "/api/v1/manage/keys/" + okRec.ID}, {"GET", "/api/v1/manage/messages/" + theirMsg},
			{"GET", "/api/v1/manage/messages/" + theirMsg + "/attempts"}, {"POST", "/api/v1/manage/events/" + evs[0].ID + "/redeliver"},
		} {
			wantProblem(t, "another account's id: "+c.method+" "+c.path, e.mg(c.method, c.path, owner, nil), 404, "NOT_FOUND")
		}
		if got := e.mg("GET", "/api/v1/manage/messages?to=5511999990077", owner, nil).json(t)["messages"].([]any); len(got) != 0 {
			t.Fatalf("a search finds another account's message: %v", got)
		}
		if list := e.mg("GET", "/api/v1/manage/limit-requests", owner, nil).json(t)["limitRequests"].([]any); len(list) != 0 {
			t.Fatalf("another account's limit request is listed: %v", list)
		}
		if b := e.do("GET", "/api/v1/integration/balance", ok.Secret, nil); b.status != 200 {
			t.Fatalf("their key after the refused revoke: %d", b.status)
		}
		wantProblem(t, "an owner listing accounts", e.mg("GET", "/api/v1/manage/accounts", owner, nil), 403, "FORBIDDEN")
		wantProblem(t, "an owner topping up", e.mg("POST", "/api/v1/manage/topups?account="+e.account.ID, owner,
			map[string]any{"amount": 10}), 403, "FORBIDDEN")

		// The operator: every account, named with ?account=.
		if r := e.mg("GET", "/api/v1/manage/keys", op, nil); r.status != 400 || fieldsOf(t, r)[0] != "account" {
			t.Fatalf("an operator naming no account: %d %s", r.status, r.body)
		}
		wantProblem(t, "an operator naming an unknown account", e.mg("GET", "/api/v1/manage/keys?account=acc_nope", op, nil), 404, "NOT_FOUND")
		if r := e.mg("GET", "/api/v1/manage/messages/"+theirMsg+q, op, nil); r.status != 200 {
			t.Fatalf("an operator reading their message: %d %s", r.status, r.body)
		}
		accts, _ := e.mg("GET", "/api/v1/manage/accounts", op, nil).json(t)["accounts"].([]any)
		if len(accts) != 2 {
			t.Fatalf("accounts: %v", accts)
		}
		r := e.mg("POST", "/api/v1/manage/topups"+q, op, map[string]any{"amount": 25.5, "note": "invoice 42"})
		if r.status != 200 || r.json(t)["balance"] != 75.5 {
			t.Fatalf("top-up: %d %s", r.status, r.body)
		}
		if r := e.mg("POST", "/api/v1/manage/topups"+q, op, map[string]any{"amount": -500}); r.status != 400 {
			t.Fatalf("a deduction below zero: %d %s", r.status, r.body)
		}
		bal := e.mg("GET", "/api/v1/manage/balance"+q, op, nil).json(t)
		line := bal["ledger"].([]any)[0].(map[string]any)
		if bal["balance"] != 75.5 || line["kind"] != "topup" || !strings.Contains(line["note"].(string), "operator operator-") ||
			!strings.Contains(line["note"].(string), "invoice 42") {
			t.Fatalf("the top-up's ledger line: %v", bal)
		}
		if got := e.mg("GET", "/api/v1/manage/limit-requests"+q, op, nil).json(t)["limitRequests"].([]any); len(got) != 1 {
			t.Fatalf("an operator's view of one account's requests: %v", got)
		}
	})
}

func TestManageBalance(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		viewer := e.member("viewer")
		for _, c := range []struct{ typ, to string }{{"SMS", "5511999990010"}, {"SMS", "5511999990020"}, {"RCS", "5511999990030"}} {
			if r := send(t, e, e.liveKey, map[string]any{"to": c.to, "message": "hi", "type": c.typ}); r.status != 202 {
				t.Fatalf("send: %d %s", r.status, r.body)
			}
		}
		r := e.mg("GET", "/api/v1/manage/balance", viewer, nil)
		b := r.json(t)
		usage, _ := b["usage"].([]any)
		lines, _ := b["ledger"].([]any)
		if r.status != 200 || b["currency"] != "USD" || len(lines) != 4 || lines[3].(map[string]any)["note"] != "opening balance" {
			t.Fatalf("balance: %d %s", r.status, r.body)
		}
		day := e.clock.Now().UTC().Format(time.DateOnly)
		if len(usage) != 2 || usage[0].(map[string]any)["day"] != day || usage[0].(map[string]any)["channel"] != "RCS" ||
			usage[1].(map[string]any)["channel"] != "SMS" || usage[1].(map[string]any)["messages"] != 2.0 {
			t.Fatalf("usage per channel per day: %v", usage)
		}
		if u := e.mg("GET", "/api/v1/manage/balance?environment=test", viewer, nil).json(t)["usage"].([]any); len(u) != 0 {
			t.Fatalf("test usage: %v", u)
		}
	})
}

// A second node on the same database: what the management API changes on
// one node applies on the other from its next request (revocation, the
// allow-list, approved limits).
func TestManageChangesApplyOnEveryNode(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		other := e.secondNode()
		admin, op := e.member("admin"), e.member("operator")
		k := e.mg("POST", "/api/v1/manage/keys", admin, map[string]any{"environment": "live"}).json(t)
		key := k["key"].(string)
		if r := other.do("GET", "/api/v1/integration/balance", key, nil); r.status != 200 {
			t.Fatalf("the new key on the other node: %d", r.status)
		}
		if r := e.mg("DELETE", "/api/v1/manage/keys/"+k["id"].(string), admin, nil); r.status != 204 {
			t.Fatalf("revoke: %d", r.status)
		}
		wantProblem(t, "the revoked key on the other node", other.do("GET", "/api/v1/integration/balance", key, nil), 401, "INVALID_API_KEY")

		e.mg("PUT", "/api/v1/manage/security/ip-allowlist", admin, map[string]any{"entries": []string{"203.0.113.7"}})
		wantProblem(t, "the allow-list on the other node", other.do("GET", "/api/v1/integration/balance", e.testKey, nil), 403, "IP_NOT_ALLOWED")
		e.mg("PUT", "/api/v1/manage/security/ip-allowlist", admin, map[string]any{"entries": []string{}})

		lr := e.mg("POST", "/api/v1/manage/limit-requests", admin, map[string]any{"monthlyVolume": 1000, "useCase": "Other",
			"justification": "more"}).json(t)
		e.mg("POST", "/api/v1/manage/limit-requests/"+lr["id"].(string)+"/approve", op, map[string]any{"tier": "basic"})
		if r := other.do("GET", "/api/v1/integration/balance", e.testKey, nil); r.header.Get("X-RateLimit-Limit") != "30" {
			t.Fatalf("the approved tier on the other node: %s", r.header.Get("X-RateLimit-Limit"))
		}
	})
}

// secondNode starts another node on the env's database, with its own data
// directory and node id, and returns an env that talks to it.
func (e *env) secondNode() *env {
	e.t.Helper()
	cfg := e.srv.cfg
	cfg.Addr, cfg.NodeID, cfg.DataDir = "127.0.0.1:0", "test-node-2", e.t.TempDir()
	srv, err := NewServer(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{Now: e.clock.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	other := &env{t: e.t, srv: srv, st: srv.Store(), base: "http://" + srv.Addr(), clock: e.clock, account: e.account,
		testKey: e.testKey, liveKey: e.liveKey, hooks: e.hooks, client: &http.Client{}}
	e.t.Cleanup(func() {
		other.client.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("second node stopped with %v", err)
		}
	})
	return other
}
