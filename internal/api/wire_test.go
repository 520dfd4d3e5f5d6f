package api

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/message"
)

// The HTTP wire of the integration API, on the harness.

var tsRe = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

const balancePath = "/api/v1/integration/balance"

func TestAuthentication(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name    string
		headers []string
		status  int
		code    string
	}{
		{"no key", nil, 401, "MISSING_API_KEY"},
		{"malformed", []string{"X-API-KEY", "nope"}, 401, "INVALID_API_KEY"},
		{"unknown", []string{"X-API-KEY", "svc_test_" + strings.Repeat("a", 40)}, 401, "INVALID_API_KEY"},
		{"bearer", []string{"Authorization", "Bearer " + h.testKey}, 200, ""},
		{"x-api-key", []string{"X-API-KEY", h.liveKey}, 200, ""},
		{"bearer lower case", []string{"Authorization", "bearer " + h.liveKey}, 200, ""},
	}
	for _, c := range cases {
		for _, path := range []string{balancePath, "/v1/account/balance"} {
			r := h.do("GET", path, "", nil, c.headers...)
			if r.status != c.status {
				t.Fatalf("%s %s: status %d, want %d: %s", c.name, path, r.status, c.status, r.body)
			}
			if r.header.Get("X-Request-Id") == "" {
				t.Fatalf("%s: no X-Request-Id", c.name)
			}
			rateHeaders(t, r) // both families on every answer, refusals included
			if c.code != "" {
				checkProblem(t, c.name+" "+path, r, c.status, c.code)
			}
		}
	}

	// Revocation takes effect at once.
	h.store.revoke(h.account.ID, domain.Live, h.clock.Now())
	checkProblem(t, "revoked key", h.do("GET", balancePath, h.liveKey, nil), 401, "INVALID_API_KEY")

	// IP allow-list: the peer is 127.0.0.1.
	h.store.update(h.account.ID, func(a *domain.Account) { a.IPAllowlist = []string{"10.0.0.0/8", "2001:db8::1"} })
	checkProblem(t, "allow-list", h.do("GET", balancePath, h.testKey, nil), 403, "IP_NOT_ALLOWED")
	h.store.update(h.account.ID, func(a *domain.Account) { a.IPAllowlist = []string{"10.0.0.0/8", "127.0.0.1/32"} })
	if r := h.do("GET", balancePath, h.testKey, nil); r.status != 200 {
		t.Fatalf("allow-listed address refused: %d %s", r.status, r.body)
	}
}

func TestBalance(t *testing.T) {
	h := newHarness(t)
	h.store.update(h.account.ID, func(a *domain.Account) { a.Balance = 12_500000 })
	r := h.do("GET", balancePath, h.testKey, nil)
	b := r.json(t)
	if r.status != 200 || b["balance"] != 12.5 || b["currency"] != "USD" || !tsRe.MatchString(b["last_updated"].(string)) {
		t.Fatalf("balance: %d %s", r.status, r.body)
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("content type %q", r.header.Get("Content-Type"))
	}
}

func TestHealthMetricsDocs(t *testing.T) {
	h := newHarness(t)
	h.do("GET", "/healthz", "", nil)
	for path, want := range map[string]string{"/healthz": `"ok"`, "/readyz": `"storage":"ok"`, "/metrics": "msgsvc_http_requests_total",
		"/openapi.json": `"openapi"`, "/docs": "/api/v1/integration/messages"} {
		r := h.do("GET", path, "", nil)
		if r.status != 200 || !strings.Contains(string(r.body), want) {
			t.Fatalf("%s: %d %.200s", path, r.status, r.body)
		}
	}
	// Storage that cannot be read takes the node out of rotation.
	h.store.pingErr = domain.ErrStorageUnavailable
	if r := h.do("GET", "/readyz", "", nil); r.status != http.StatusServiceUnavailable || r.json(t)["status"] != "unavailable" ||
		r.header.Get("Retry-After") == "" {
		t.Fatalf("/readyz with storage down: %d %s", r.status, r.body)
	}
}

// Every error is problem+json: wrong methods and unknown paths included.
func TestEveryErrorIsProblemJSON(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		method, path, key string
		status            int
		code, allow       string
	}{
		{"DELETE", balancePath, h.testKey, 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		{"PUT", "/api/v1/integration/messages", h.testKey, 405, "METHOD_NOT_ALLOWED", "GET, HEAD, POST"},
		{"GET", "/api/v1/integration/messages/msg_x/cancel", h.testKey, 405, "METHOD_NOT_ALLOWED", "POST"},
		{"POST", "/healthz", "", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		{"GET", "/no/such/path", "", 404, "NOT_FOUND", ""},
		{"GET", "/api/v1/integration/nothing-here", "", 401, "MISSING_API_KEY", ""},
		{"GET", "/api/v1/integration/nothing-here", h.testKey, 404, "NOT_FOUND", ""},
	}
	for _, c := range cases {
		r := h.do(c.method, c.path, c.key, nil)
		checkProblem(t, c.method+" "+c.path, r, c.status, c.code)
		if r.header.Get("Allow") != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, r.header.Get("Allow"), c.allow)
		}
	}
}

// A send's body is decoded strictly: what the decoder refuses never
// reaches the send, and the refusal names the field.
func TestSendDecoding(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"unknown field", map[string]any{"to": "5511999990000", "message": "hi", "type": "SMS", "colour": "red"}, "colour"},
		{"wrong type", map[string]any{"to": 5511999990000, "message": "hi", "type": "SMS"}, "to"},
		{"duplicate to", `{"to":"5511999990010","to":"5511999990020","message":"hi","type":"SMS"}`, "to"},
		{"duplicate type", `{"to":"5511999990010","message":"hi","type":"SMS","type":"RCS"}`, "type"},
		{"duplicate nested key", `{"to":"5511999990010","message":"hi","type":"WHATSAPP","buttons":[{"type":"reply","title":"a","title":"b","payload":"p"}]}`, "buttons[0].title"},
		{"invalid UTF-8", "{\"to\":\"5511999990010\",\"message\":\"h\xffi\",\"type\":\"SMS\"}", ""},
		{"NUL in the text", `{"to":"5511999990010","message":"a\u0000b","type":"SMS"}`, "message"},
		{"escape in the text", `{"to":"5511999990010","message":"a\u001bb","type":"SMS"}`, "message"},
		{"carriage return", `{"to":"5511999990010","message":"a\rb","type":"SMS"}`, "message"},
		{"empty", "", ""},
		{"not closed", "{", ""},
		{"an array", "[1]", ""},
		{"two objects", `{"to":"5511999990000"} {}`, ""},
	}
	for _, c := range cases {
		r := h.send(h.liveKey, c.body)
		checkProblem(t, c.name, r, 400, "VALIDATION_ERROR")
		if c.field != "" && !strings.Contains(strings.Join(r.fields(t), " "), c.field) {
			t.Errorf("%s: errors name %v, want %s", c.name, r.fields(t), c.field)
		}
	}
	if r := h.send(h.liveKey, `{}`, "Content-Type", "text/plain"); r.status != 415 {
		t.Fatalf("text/plain: %d", r.status)
	}
	big := `{"message":"` + strings.Repeat("x", 1<<20) + `"}`
	checkProblem(t, "large body", h.send(h.liveKey, big), 413, "PAYLOAD_TOO_LARGE")
	if n := h.msgs.sent(); n != 0 {
		t.Fatalf("%d refused bodies reached the send", n)
	}
	// Newline and tab are text.
	if r := h.send(h.testKey, `{"to":"5511999990010","message":"a\n\tb","type":"SMS"}`); r.status != 202 || h.msgs.sent() != 1 {
		t.Fatalf("newline and tab refused: %d %s", r.status, r.body)
	}
	// What the send refuses is answered as its problem.
	h.msgs.refuse(message.ErrInsufficientCredits)
	checkProblem(t, "insufficient credits", h.send(h.liveKey, map[string]any{"to": "5511999990000", "message": "x", "type": "SMS"}),
		402, "INSUFFICIENT_CREDITS")
}

// A send's answer: 202 with the receipt, 200 on a dry run.
func TestSendAnswers(t *testing.T) {
	h := newHarness(t)
	body := map[string]any{"to": "5511999990000", "message": "hi", "type": "SMS"}
	r := h.send(h.liveKey, body)
	b := r.json(t)
	if r.status != 202 || b["status"] != "SENDING" || b["credits"] != 1.0 || !strings.HasPrefix(b["campaignId"].(string), "cmp_") ||
		!strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("send: %d %s", r.status, r.body)
	}
	r = h.do("POST", "/api/v1/integration/messages?dryRun=true", h.liveKey, body)
	if db := r.json(t); r.status != 200 || db["dryRun"] != true || db["campaignId"] != nil {
		t.Fatalf("dry run: %d %s", r.status, r.body)
	}
	checkProblem(t, "dryRun=maybe", h.do("POST", "/api/v1/integration/messages?dryRun=maybe", h.liveKey, body), 400, "VALIDATION_ERROR")
}

// The send keeps its Idempotency-Key in its own transaction; the wire
// hashes the request, marks a replay and refuses a key over 255 characters.
func TestSendIdempotency(t *testing.T) {
	h := newHarness(t)
	body := map[string]any{"to": "5511999990000", "message": "once", "type": "SMS"}
	r1 := h.send(h.liveKey, body, "Idempotency-Key", "k-1")
	r2 := h.send(h.liveKey, body, "Idempotency-Key", "k-1")
	if r1.status != 202 || r2.status != 202 || string(r1.body) != string(r2.body) || r2.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s / %d %s", r1.status, r1.body, r2.status, r2.body)
	}
	if r1.header.Get("Idempotent-Replayed") != "" {
		t.Fatal("first answer marked replayed")
	}
	r3 := h.send(h.liveKey, map[string]any{"to": "5511999990000", "message": "different", "type": "SMS"}, "Idempotency-Key", "k-1")
	checkProblem(t, "another body under the key", r3, 409, "IDEMPOTENCY_CONFLICT")
	r4 := h.do("POST", "/api/v1/integration/messages?dryRun=false", h.liveKey, body, "Idempotency-Key", "k-1")
	checkProblem(t, "another query under the key", r4, 409, "IDEMPOTENCY_CONFLICT")
	checkProblem(t, "long key", h.send(h.liveKey, body, "Idempotency-Key", strings.Repeat("k", 256)), 400, "VALIDATION_ERROR")
	// Other keys of the same account have their own key space.
	if r := h.send(h.testKey, body, "Idempotency-Key", "k-1"); r.status != 202 || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("key scope: %d %s", r.status, r.body)
	}
	if n := h.msgs.sent(); n != 2 {
		t.Fatalf("%d sends made, want 2", n)
	}
}

// Other POSTs keep their answer after the handler ran: the same request
// again is answered from it, another under the same key is refused.
func TestIdempotentCancel(t *testing.T) {
	h := newHarness(t)
	sc := scope(h.account, domain.Live)
	h.msgs.put(sc, domain.Message{ID: "msg_1", Status: domain.Sending})
	cancel := "/api/v1/integration/messages/msg_1/cancel"
	r1 := h.do("POST", cancel, h.liveKey, nil, "Idempotency-Key", "c-1")
	if r1.status != 200 || r1.json(t)["status"] != "CANCELED" || r1.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("cancel: %d %s", r1.status, r1.body)
	}
	// Without the key the second cancel reaches the service, which refuses.
	checkProblem(t, "second cancel", h.do("POST", cancel, h.liveKey, nil), 409, "MESSAGE_NOT_CANCELABLE")
	r2 := h.do("POST", cancel, h.liveKey, nil, "Idempotency-Key", "c-1")
	if r2.status != 200 || string(r2.body) != string(r1.body) || r2.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replayed cancel: %d %s", r2.status, r2.body)
	}
	checkProblem(t, "another request under the key", h.do("POST", "/api/v1/integration/messages/msg_2/cancel", h.liveKey, nil,
		"Idempotency-Key", "c-1"), 409, "IDEMPOTENCY_CONFLICT")
	// A refusal is not remembered.
	checkProblem(t, "unknown message", h.do("POST", "/api/v1/integration/messages/msg_3/cancel", h.liveKey, nil, "Idempotency-Key", "c-3"),
		404, "NOT_FOUND")
	h.msgs.put(sc, domain.Message{ID: "msg_3", Status: domain.Sending})
	if r := h.do("POST", "/api/v1/integration/messages/msg_3/cancel", h.liveKey, nil, "Idempotency-Key", "c-3"); r.status != 200 {
		t.Fatalf("cancel after a refusal under the key: %d %s", r.status, r.body)
	}
}

// Reads are scoped: another environment's or account's ids are not found,
// never forbidden.
func TestReadsAreScoped(t *testing.T) {
	h := newHarness(t)
	h.msgs.put(scope(h.account, domain.Live), domain.Message{ID: "msg_live", Status: domain.Sending, To: "5511999990000"})
	if r := h.do("GET", "/api/v1/integration/messages/msg_live", h.liveKey, nil); r.status != 200 || r.json(t)["to"] != "5511999990000" {
		t.Fatalf("own message: %d %s", r.status, r.body)
	}
	_, otherKey := h.newAccount("pro", domain.Limits{})
	for _, key := range []string{h.testKey, otherKey} {
		checkProblem(t, "other scope's message", h.do("GET", "/api/v1/integration/messages/msg_live", key, nil), 404, "NOT_FOUND")
		checkProblem(t, "other scope's cancel", h.do("POST", "/api/v1/integration/messages/msg_live/cancel", key, nil), 404, "NOT_FOUND")
	}
}

// A campaign's messages come in pages; the cursor is opaque and checked.
func TestCampaignPaging(t *testing.T) {
	h := newHarness(t)
	var msgs []domain.Message
	for _, id := range []string{"msg_1", "msg_2", "msg_3", "msg_4", "msg_5"} {
		msgs = append(msgs, domain.Message{ID: id, Status: domain.Sending})
	}
	h.msgs.campaigns["cmp_1"] = fakeScoped[message.CampaignPage]{scope(h.account, domain.Live), message.CampaignPage{
		Campaign: domain.Campaign{ID: "cmp_1", Total: 5}, Status: "SENDING", Counts: map[domain.Status]int{domain.Sending: 5}, Messages: msgs}}
	// page reads the page after cursor and returns its messages and the
	// next cursor ("" on the last page).
	page := func(cursor string) (ids, next string) {
		t.Helper()
		c := h.do("GET", "/api/v1/integration/campaigns/cmp_1?limit=2&cursor="+cursor, h.liveKey, nil).json(t)
		if c["total"] != 5.0 || c["counts"].(map[string]any)["SENDING"] != 5.0 || c["status"] != "SENDING" || c["campaignId"] != "cmp_1" {
			t.Fatalf("campaign %v", c)
		}
		var got []string
		for _, m := range c["messages"].([]any) {
			got = append(got, m.(map[string]any)["messageId"].(string))
		}
		next, _ = c["nextCursor"].(string)
		if strings.Contains(next, "msg_") {
			t.Fatalf("cursor %q shows the message id", next)
		}
		return strings.Join(got, ","), next
	}
	first, c1 := page("")
	second, c2 := page(c1)
	third, c3 := page(c2)
	if first != "msg_1,msg_2" || second != "msg_3,msg_4" || third != "msg_5" || c3 != "" {
		t.Fatalf("pages %s / %s / %s, last cursor %q", first, second, third, c3)
	}
	for _, bad := range []string{"?limit=0", "?limit=1001", "?limit=x", "?cursor=bm90LWEtY3Vyc29y", "?cursor=!!"} {
		checkProblem(t, bad, h.do("GET", "/api/v1/integration/campaigns/cmp_1"+bad, h.liveKey, nil), 400, "VALIDATION_ERROR")
	}
	checkProblem(t, "other environment", h.do("GET", "/api/v1/integration/campaigns/cmp_1", h.testKey, nil), 404, "NOT_FOUND")
}

// Test replies: test keys only, checked before they reach the tracker.
func TestTestReplies(t *testing.T) {
	h := newHarness(t)
	path := "/api/v1/integration/test/replies"
	checkProblem(t, "live key", h.do("POST", path, h.liveKey, map[string]any{"from": "5511999990020", "message": "x"}), 403, "FORBIDDEN")
	r := h.do("POST", path, h.testKey, map[string]any{"from": "12", "message": "", "channel": "FAX"})
	checkProblem(t, "bad reply", r, 400, "VALIDATION_ERROR")
	if got := strings.Join(r.fields(t), ","); got != "from,message,channel" {
		t.Errorf("bad reply names %s", got)
	}
	if h.replies.got != 0 {
		t.Fatalf("refused replies reached the tracker: %d", h.replies.got)
	}
	r = h.do("POST", path, h.testKey, map[string]any{"from": "5511988887777", "message": "who?", "channel": "whatsapp"})
	if r.status != 202 || r.json(t)["campaignId"] != nil || r.json(t)["accepted"] != true || h.replies.got != 1 {
		t.Fatalf("reply: %d %s", r.status, r.body)
	}
}
