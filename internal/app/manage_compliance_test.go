package app

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// The opt-out list and the compliance settings through the management API
// and the panel (docs/compliance.md): what a person adds or removes there
// is what the next send meets.

func TestManageOptOuts(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		admin, viewer := e.member("admin"), e.member("viewer")
		const path = "/api/v1/manage/opt-outs"
		const number = "5511999990041"

		wantProblem(t, "a viewer adding", e.mg("POST", path, viewer, map[string]any{"phone": number, "environment": "test"}), 403, "FORBIDDEN")
		for _, bad := range []map[string]any{
			{"phone": "not a number", "environment": "test"},
			{"phone": number, "environment": "staging"},
		} {
			r := e.mg("POST", path, admin, bad)
			if r.status != 400 || len(fieldsOf(t, r)) != 1 {
				t.Errorf("add %v: %d %s", bad, r.status, r.body)
			}
		}
		if got := e.mg("GET", path+"?environment=test", viewer, nil).json(t)["optOuts"].([]any); len(got) != 0 {
			t.Fatalf("a refused add was recorded: %v", got)
		}

		r := e.mg("POST", path, admin, map[string]any{"phone": "+" + number, "environment": "test"})
		o := r.json(t)
		if r.status != 201 || o["phone"] != number || o["environment"] != "test" || o["source"] != "account" || o["channel"] != nil {
			t.Fatalf("add: %d %s", r.status, r.body)
		}
		// The account's admin is recorded as the account, an operator as the operator.
		op := e.mg("POST", path+"?account="+e.account.ID, e.member("operator"), map[string]any{"phone": "5511999990049", "environment": "live"})
		if op.status != 201 || op.json(t)["source"] != "operator" {
			t.Fatalf("an operator's opt-out: %d %s", op.status, op.body)
		}
		if del := e.mg("DELETE", path+"/5511999990049?environment=live", admin, nil); del.status != 204 {
			t.Fatalf("undo the operator's opt-out: %d %s", del.status, del.body)
		}
		if again := e.mg("POST", path, admin, map[string]any{"phone": number, "environment": "test"}); again.status != 200 ||
			again.json(t)["createdAt"] != o["createdAt"] {
			t.Fatalf("adding twice: %d %s", again.status, again.body)
		}
		s := send(t, e, e.testKey, map[string]any{"to": number, "message": "Sale", "type": "SMS"})
		if s.status != 422 || problemCode(t, s) != "RECIPIENT_OPTED_OUT" {
			t.Fatalf("a send to a number opted out in the panel: %d %s", s.status, s.body)
		}
		// The live list is apart, and live is the default environment.
		if got := e.mg("GET", path, viewer, nil).json(t)["optOuts"].([]any); len(got) != 0 {
			t.Fatalf("the live list holds a test opt-out: %v", got)
		}

		// Paging: oldest first, every entry once.
		for i := range 4 {
			if r := e.mg("POST", path, admin, map[string]any{"phone": fmt.Sprintf("55119999901%02d", i), "environment": "test"}); r.status != 201 {
				t.Fatalf("add %d: %d %s", i, r.status, r.body)
			}
		}
		var seen []string
		for cursor, pages := "", 0; ; pages++ {
			if pages > 5 {
				t.Fatal("paging does not end")
			}
			q := url.Values{"environment": {"test"}, "limit": {"2"}}
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			p := e.mg("GET", path+"?"+q.Encode(), viewer, nil).json(t)
			for _, it := range p["optOuts"].([]any) {
				seen = append(seen, it.(map[string]any)["phone"].(string))
			}
			next, _ := p["nextCursor"].(string)
			if next == "" {
				break
			}
			cursor = next
		}
		if want := number + ",5511999990100,5511999990101,5511999990102,5511999990103"; strings.Join(seen, ",") != want {
			t.Fatalf("pages = %v, want %s", seen, want)
		}
		wantProblem(t, "a forged cursor", e.mg("GET", path+"?cursor=abc", viewer, nil), 400, "VALIDATION_ERROR")
		wantProblem(t, "a huge page", e.mg("GET", path+"?limit=1001", viewer, nil), 400, "VALIDATION_ERROR")

		wantProblem(t, "a viewer removing", e.mg("DELETE", path+"/"+number+"?environment=test", viewer, nil), 403, "FORBIDDEN")
		wantProblem(t, "removing from the wrong environment", e.mg("DELETE", path+"/"+number, admin, nil), 404, "NOT_FOUND")
		if r := e.mg("DELETE", path+"/"+number+"?environment=test", admin, nil); r.status != 204 {
			t.Fatalf("remove: %d %s", r.status, r.body)
		}
		wantProblem(t, "removing twice", e.mg("DELETE", path+"/"+number+"?environment=test", admin, nil), 404, "NOT_FOUND")
		if s := send(t, e, e.testKey, map[string]any{"to": number, "message": "Welcome back", "type": "SMS"}); s.status != 202 {
			t.Fatalf("a send after the panel opted the number in: %d %s", s.status, s.body)
		}
	})
}

func TestManageComplianceSettings(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		admin, dev := e.member("admin"), e.member("developer")
		const path = "/api/v1/manage/compliance"
		r := e.mg("GET", path, dev, nil)
		if c := r.json(t); r.status != 200 || c["quietHours"] != nil || c["retentionDays"] != float64(0) || c["optOutReply"] != nil {
			t.Fatalf("defaults: %d %s", r.status, r.body)
		}
		wantProblem(t, "a developer changing", e.mg("PUT", path, dev, map[string]any{"retentionDays": 30}), 403, "FORBIDDEN")
		// Every bad field is named, and nothing changes.
		r = e.mg("PUT", path, admin, map[string]any{"quietHours": "9pm-8am", "retentionDays": 99999, "optOutReply": strings.Repeat("x", 1001),
			"optInReply": "fine"})
		if f := strings.Join(fieldsOf(t, r), ","); r.status != 400 || f != "quietHours,retentionDays,optOutReply" {
			t.Fatalf("bad settings: %d %s", r.status, r.body)
		}
		wantProblem(t, "an unknown field", e.mg("PUT", path, admin, map[string]any{"quietHour": "21:00-08:00"}), 400, "VALIDATION_ERROR")
		if c := e.mg("GET", path, dev, nil).json(t); c["optInReply"] != nil || c["retentionDays"] != float64(0) {
			t.Fatalf("a refused change changed: %v", c)
		}
		r = e.mg("PUT", path, admin, map[string]any{"quietHours": " 21:00 - 08:00 ", "retentionDays": 90, "optOutReply": "Bye from Acme."})
		if c := r.json(t); r.status != 200 || c["quietHours"] != "21:00-08:00" || c["retentionDays"] != float64(90) || c["optOutReply"] != "Bye from Acme." {
			t.Fatalf("set: %d %s", r.status, r.body)
		}
		// Left out keeps, "" turns off.
		r = e.mg("PUT", path, admin, map[string]any{"quietHours": ""})
		if c := r.json(t); r.status != 200 || c["quietHours"] != nil || c["retentionDays"] != float64(90) || c["optOutReply"] != "Bye from Acme." {
			t.Fatalf("partial change: %d %s", r.status, r.body)
		}
		if a, _ := e.st.Account(t.Context(), e.account.ID); a.Compliance.RetentionDays != 90 || a.Compliance.QuietHours != "" {
			t.Fatalf("stored: %+v", a.Compliance)
		}
	})
}

// The panel's compliance page: an admin opts a number out and back in and
// saves the settings; a viewer reads without a form; the list is per
// environment.
func TestPanelCompliance(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	const number = "5511999990051"
	admin := e.browser()
	admin.login(e.user("admin"))
	csrf := admin.csrf("/settings/compliance")

	p := admin.post("/settings/compliance/opt-outs", url.Values{"csrf": {csrf}, "environment": {"test"}, "phone": {"abc"}})
	if p.status != 400 || !strings.Contains(p.body, `id="err-phone"`) || !strings.Contains(p.body, `value="abc"`) {
		t.Fatalf("a bad number: %d", p.status)
	}
	p = admin.post("/settings/compliance/opt-outs", url.Values{"csrf": {csrf}, "environment": {"test"}, "phone": {"+" + number}})
	if p.status != 303 || !strings.Contains(p.header.Get("Location"), "environment=test") {
		t.Fatalf("opt out: %d %s", p.status, p.header.Get("Location"))
	}
	page := admin.get(p.header.Get("Location"))
	if !strings.Contains(page.body, "+"+number) || !strings.Contains(page.body, "sends to it are refused") || !strings.Contains(page.body, "added by a person") {
		t.Fatalf("the test list does not show the number: %s", page.body)
	}
	if live := admin.get("/settings/compliance"); strings.Contains(live.body, "+"+number) || !strings.Contains(live.body, "Nobody has opted out of live messages") {
		t.Fatal("the live list shows a test opt-out")
	}
	if s := send(t, e, e.testKey, map[string]any{"to": number, "message": "Sale", "type": "SMS"}); s.status != 422 {
		t.Fatalf("send after the panel opted the number out: %d %s", s.status, s.body)
	}

	viewer := e.browser()
	viewer.login(e.user("viewer"))
	vp := viewer.get("/settings/compliance?environment=test")
	if vp.status != 200 || !strings.Contains(vp.body, "+"+number) || strings.Contains(vp.body, "Opt back in") || strings.Contains(vp.body, "Save settings") {
		t.Fatalf("a viewer's page: %d", vp.status)
	}
	if p := viewer.post("/settings/compliance/opt-outs/"+number+"/remove", url.Values{"csrf": {viewer.csrf("/settings/compliance")},
		"environment": {"test"}}); p.status != 403 {
		t.Fatalf("a viewer opting a number in: %d", p.status)
	}

	p = admin.post("/settings/compliance/opt-outs/"+number+"/remove", url.Values{"csrf": {csrf}, "environment": {"test"}})
	if p.status != 303 || !strings.Contains(admin.get(p.header.Get("Location")).body, "opted back in") {
		t.Fatalf("opt in: %d", p.status)
	}
	if s := send(t, e, e.testKey, map[string]any{"to": number, "message": "Welcome back", "type": "SMS"}); s.status != 202 {
		t.Fatalf("send after the panel opted the number in: %d %s", s.status, s.body)
	}

	p = admin.post("/settings/compliance", url.Values{"csrf": {csrf}, "quietHours": {"25:00-08:00"}, "retentionDays": {"30"}})
	if p.status != 400 || !strings.Contains(p.body, `id="err-quietHours"`) || !strings.Contains(p.body, `value="25:00-08:00"`) {
		t.Fatalf("bad quiet hours: %d", p.status)
	}
	p = admin.post("/settings/compliance", url.Values{"csrf": {csrf}, "quietHours": {"22:00-07:30"}, "retentionDays": {"30"},
		"optOutReply": {"You are unsubscribed."}, "optInReply": {""}})
	if p.status != 303 {
		t.Fatalf("save settings: %d %s", p.status, p.body)
	}
	if a, _ := e.st.Account(t.Context(), e.account.ID); a.Compliance.QuietHours != "22:00-07:30" || a.Compliance.RetentionDays != 30 ||
		a.Compliance.OptOutReply != "You are unsubscribed." {
		t.Fatalf("stored: %+v", a.Compliance)
	}
	if vp := viewer.get("/settings/compliance"); !strings.Contains(vp.body, "22:00-07:30") || !strings.Contains(vp.body, "30 days") {
		t.Fatal("the viewer does not see the settings")
	}
}
