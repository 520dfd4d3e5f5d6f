package app

import (
	"strings"
	"testing"
)

// The panel's pictures and replies over plain HTTP: whose each page is,
// and what it shows.

// testReply has a recipient answer an account's test key.
func testReply(t *testing.T, e *env, key, from, text string) {
	t.Helper()
	if r := e.do("POST", "/api/v1/integration/test/replies", key, map[string]any{"from": from, "message": text}); r.status != 202 {
		t.Fatalf("reply %q: %d %s", text, r.status, r.body)
	}
}

// Replies are listed on their own page and on the message they answer,
// to any role of the account and to operators naming it; another
// account's users see none of them, in the panel or the API, whatever
// account they name.
func TestRepliesWhoseIsThis(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		const phone = "5511977770001"
		ours := msgID(t, send(t, e, e.testKey, map[string]any{"to": phone, "message": "Your table is ready", "type": "SMS"}), 0)
		testReply(t, e, e.testKey, phone, "On my way, says Acme's guest")
		other, otherKey := otherAccount(t, e)
		theirs := msgID(t, send(t, e, otherKey, map[string]any{"to": phone, "message": "Other's news", "type": "SMS"}), 0)
		testReply(t, e, otherKey, phone, "Stop writing, says Other's guest")

		// The API.
		dev := e.member("viewer")
		r := e.mg("GET", "/api/v1/manage/replies", dev, nil)
		list, _ := r.json(t)["replies"].([]any)
		if r.status != 200 || len(list) != 1 {
			t.Fatalf("the account's replies: %d %s", r.status, r.body)
		}
		if got := list[0].(map[string]any); got["message"] != "On my way, says Acme's guest" || got["messageId"] != ours ||
			got["environment"] != "test" || got["phone"] != phone {
			t.Fatalf("the reply: %v", got)
		}
		wantProblem(t, "naming another account", e.mg("GET", "/api/v1/manage/replies?account="+other.ID, dev, nil), 404, "NOT_FOUND")
		wantProblem(t, "no session", e.mg("GET", "/api/v1/manage/replies", "", nil), 401, "INVALID_TOKEN")
		wantProblem(t, "a bad phone", e.mg("GET", "/api/v1/manage/replies?phone=12ab", dev, nil), 400, "VALIDATION_ERROR")
		op := e.member("operator")
		if r := e.mg("GET", "/api/v1/manage/replies?account="+other.ID, op, nil); r.status != 200 ||
			!strings.Contains(string(r.body), "Stop writing") || strings.Contains(string(r.body), "On my way") {
			t.Fatalf("an operator on the other account's replies: %d %s", r.status, r.body)
		}

		// The panel, to the least role there is.
		viewer := e.browser()
		viewer.login(e.user("viewer"))
		for _, path := range []string{"/replies", "/replies?account=" + other.ID, "/messages/" + ours} {
			p := viewer.get(path)
			if p.status != 200 || !strings.Contains(p.body, "On my way, says Acme&#39;s guest") || strings.Contains(p.body, "Stop writing") {
				t.Fatalf("%s: %d, want our reply and not theirs:\n%s", path, p.status, p.body)
			}
		}
		if p := viewer.get("/replies"); !strings.Contains(p.body, `href="/messages/`+ours+`"`) {
			t.Error("the reply does not link to the message it answers")
		}
		if p := viewer.get("/messages/" + theirs); p.status != 404 || strings.Contains(p.body, "Stop writing") {
			t.Fatalf("their message: %d", p.status)
		}
		if p := viewer.get("/replies?phone=5511900000000"); !strings.Contains(p.body, "No replies match") {
			t.Error("a phone that never replied shows replies")
		}
		if p := e.browser().get("/replies"); p.status != 303 || !strings.HasPrefix(p.header.Get("Location"), "/login") {
			t.Fatalf("replies without a login: %d %s", p.status, p.header.Get("Location"))
		}
		opb := e.browser()
		opb.login(e.user("operator"))
		if p := opb.get("/replies?account=" + other.ID); p.status != 200 || !strings.Contains(p.body, "Stop writing") ||
			strings.Contains(p.body, "On my way") {
			t.Fatalf("an operator on the other account's replies page: %d", p.status)
		}
	})
}

// A newcomer who only sent test messages lands on the test overview and
// balance, and test messages say they were not charged; once live traffic
// exists, live is shown again.
func TestOverviewOpensOnTraffic(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	for _, to := range []string{"5511977770011", "5511977770012"} {
		msgID(t, send(t, e, e.testKey, map[string]any{"to": to, "message": "hello", "type": "SMS"}), 0)
	}
	b := e.browser()
	b.login(e.user("viewer"))
	p := b.get("/")
	for _, want := range []string{"Showing <strong>test</strong>", "<strong>Test</strong>", `id="chart-trend-messages"`,
		"2 messages in the last 30 days", "Test messages are never charged", `<span class="badge free">not charged</span>`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the newcomer's overview lacks %q", want)
		}
	}
	if p := b.get("/?environment=live"); strings.Contains(p.body, "Showing <strong>test</strong>") || !strings.Contains(p.body, "0 messages in the last 30 days") {
		t.Error("asking for live does not show live")
	}
	if p := b.get("/balance"); !strings.Contains(p.body, "Showing <strong>test</strong>") || !strings.Contains(p.body, `id="chart-credits"`) {
		t.Error("the newcomer's balance does not open on test with its credits chart")
	}
	if p := b.get("/messages"); strings.Count(p.body, "not charged</span>") != 2 {
		t.Errorf("test messages in the list do not say they were not charged")
	}
	live := msgID(t, send(t, e, e.liveKey, map[string]any{"to": "5511977770013", "message": "hello", "type": "SMS"}), 0)
	p = b.get("/")
	if strings.Contains(p.body, "Showing <strong>test</strong>") || !strings.Contains(p.body, "<strong>Live</strong>") {
		t.Error("with live traffic the overview still opens on test")
	}
	if p := b.get("/balance"); strings.Contains(p.body, "Showing <strong>test</strong>") || !strings.Contains(p.body, "credits charged in the last 30 days") {
		t.Error("with live traffic the balance still opens on test")
	}
	if p := b.get("/messages/" + live); strings.Contains(p.body, "not charged") {
		t.Error("a live message says it was not charged")
	}
}

// The operators' pictures are theirs: the traffic across accounts on the
// operator page and the margin per day on Routes; an account's owner gets
// neither, nor another account's names.
func TestOperatorChartsWhoseIsThis(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	msgID(t, send(t, e, e.liveKey, map[string]any{"to": "5511977770021", "message": "hello", "type": "SMS"}), 0)
	op := e.browser()
	op.login(e.user("operator"))
	p := op.get("/operator")
	if p.status != 200 || !strings.Contains(p.body, `id="chart-traffic"`) || !strings.Contains(p.body, ": 1 Acme</title>") {
		t.Fatalf("the operator's traffic chart: %d", p.status)
	}
	if p := op.get("/operator/routes"); p.status != 200 || !strings.Contains(p.body, `id="chart-margins"`) {
		t.Fatalf("the margin per day chart: %d", p.status)
	}
	owner := e.browser()
	owner.login(e.user("owner"))
	for _, path := range []string{"/operator", "/operator/routes"} {
		if p := owner.get(path); p.status != 403 || strings.Contains(p.body, "chart-") {
			t.Fatalf("an owner on %s: %d", path, p.status)
		}
	}
	if p := owner.get("/"); strings.Contains(p.body, `href="/operator"`) {
		t.Error("an owner's navigation offers the operator pages")
	}
}
