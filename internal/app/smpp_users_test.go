package app

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// SMPP users through the management API: the password once, hashed at
// rest, roles, and another account's users out of reach.
func TestManageSMPPUsers(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		dev, viewer := e.member("developer"), e.member("viewer")
		const path = "/api/v1/manage/smpp-users"
		r := e.mg("POST", path, dev, map[string]any{"environment": "live", "systemId": "acme", "maxBinds": 2})
		u := r.json(t)
		pw, _ := u["password"].(string)
		if r.status != 201 || !regexp.MustCompile(`^[A-Za-z0-9]{8}$`).MatchString(pw) || u["systemId"] != "acme" ||
			u["environment"] != "live" || u["maxBinds"] != float64(2) || !strings.HasPrefix(u["id"].(string), "smu_") {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		stored, _, err := e.st.SMPPUserBySystemID(context.Background(), "acme")
		if err != nil || strings.Contains(stored.PasswordHash, pw) || !strings.HasPrefix(stored.PasswordHash, "$argon2id$") {
			t.Fatalf("stored: %+v %v", stored, err)
		}
		gen := e.mg("POST", path, dev, map[string]any{"environment": "test"}).json(t)
		if sid, _ := gen["systemId"].(string); len(sid) == 0 || len(sid) > 15 || gen["maxBinds"] != float64(4) {
			t.Fatalf("generated system_id and default maxBinds: %v", gen)
		}
		for _, bad := range []map[string]any{{"environment": "prod"}, {"environment": "live", "systemId": "acme"},
			{"environment": "live", "systemId": strings.Repeat("s", 16)}, {"environment": "live", "maxBinds": 0},
			{"environment": "live", "systemId": "a b"}} {
			wantProblem(t, fmt.Sprintf("create %v", bad), e.mg("POST", path, dev, bad), 400, "VALIDATION_ERROR")
		}
		wantProblem(t, "a viewer creating", e.mg("POST", path, viewer, map[string]any{"environment": "test"}), 403, "FORBIDDEN")
		wantProblem(t, "a viewer listing", e.mg("GET", path, viewer, nil), 403, "FORBIDDEN")

		list := e.mg("GET", path, dev, nil)
		users, _ := list.json(t)["smppUsers"].([]any)
		ids := map[any]bool{}
		for _, x := range users {
			ids[x.(map[string]any)["id"]] = true
		}
		// Both were created in the same instant, often: the list names each, in no promised order among equals.
		if list.status != 200 || len(users) != 2 || !ids[u["id"]] || !ids[gen["id"]] || strings.Contains(string(list.body), pw) {
			t.Fatalf("list: %d %s", list.status, list.body)
		}

		// Another account's developer sees none of them and removes none.
		other, _ := otherAccount(t, e)
		email := "dev@other.example"
		if _, _, err := createTestUser(context.Background(), e.st, other.ID, email, "developer", testPassword, e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		theirs := e.login(email, testPassword)
		if l := e.mg("GET", path, theirs, nil); l.status != 200 || strings.Contains(string(l.body), "smu_") {
			t.Fatalf("the other account's list: %d %s", l.status, l.body)
		}
		wantProblem(t, "another account removing", e.mg("DELETE", path+"/"+u["id"].(string), theirs, nil), 404, "NOT_FOUND")
		wantProblem(t, "another account naming ours", e.mg("GET", path+"?account="+e.account.ID, theirs, nil), 403, "FORBIDDEN")

		if r := e.mg("DELETE", path+"/"+u["id"].(string), dev, nil); r.status != 204 {
			t.Fatalf("remove: %d %s", r.status, r.body)
		}
		wantProblem(t, "removing twice", e.mg("DELETE", path+"/"+u["id"].(string), dev, nil), 404, "NOT_FOUND")
	})
}

// Settings → SMPP in the panel: a developer makes a user and sees its
// password once, a viewer is refused, another account's developer cannot
// remove it.
func TestPanelSMPPUsers(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	ctx := context.Background()
	dev := e.browser()
	dev.login(e.user("developer"))
	p := dev.post("/settings/smpp", url.Values{"csrf": {dev.csrf("/settings/smpp")}, "environment": {"live"},
		"systemId": {"acme"}, "maxBinds": {"2"}})
	users, err := e.st.SMPPUsers(ctx, e.account.ID)
	if p.status != 201 || err != nil || len(users) != 1 || !strings.Contains(p.body, "Copy the password now") {
		t.Fatalf("create: %d %v %v", p.status, users, err)
	}
	pw := regexp.MustCompile(`id="new-smpp-password" class="mono" type="text" value="([A-Za-z0-9]{8})"`).FindStringSubmatch(p.body)
	if pw == nil {
		t.Fatal("the page does not show the password")
	}
	if page := dev.get("/settings/smpp"); strings.Contains(page.body, pw[1]) || !strings.Contains(page.body, "acme") {
		t.Fatal("the list shows the password, or not the user")
	}
	if page := dev.post("/settings/smpp", url.Values{"csrf": {dev.csrf("/settings/smpp")}, "environment": {"live"},
		"systemId": {"acme"}}); page.status != 400 || !strings.Contains(page.body, "is taken") {
		t.Fatalf("a taken system_id: %d", page.status)
	}
	viewer := e.browser()
	viewer.login(e.user("viewer"))
	if page := viewer.get("/settings/smpp"); page.status != 403 {
		t.Fatalf("a viewer's SMPP page: %d", page.status)
	}
	other, _ := otherAccount(t, e)
	if _, _, err := createTestUser(ctx, e.st, other.ID, "dev@other.example", "developer", testPassword, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.login("dev@other.example")
	if page := b.post("/settings/smpp/"+users[0].ID+"/remove", url.Values{"csrf": {b.csrf("/settings/smpp")}}); page.status != 404 {
		t.Fatalf("B removing A's user: %d", page.status)
	}
	if page := dev.post("/settings/smpp/"+users[0].ID+"/remove", url.Values{"csrf": {dev.csrf("/settings/smpp")}}); page.status != 303 {
		t.Fatalf("remove: %d", page.status)
	}
	if got, _ := e.st.SMPPUsers(ctx, e.account.ID); len(got) != 0 {
		t.Fatalf("after remove: %v", got)
	}
}
