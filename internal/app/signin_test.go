package app

import (
	"net/url"
	"strings"
	"testing"
)

// Wrong current passwords in a password change are throttled per user
// before hashing (33 in a row were checked before), and a password of only
// spaces is refused.
func TestPasswordChangeLimits(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		viewer := e.member("viewer")
		const path = "/api/v1/auth/password"
		r := e.mg("POST", path, viewer, map[string]any{"currentPassword": testPassword, "newPassword": "            "})
		if f := fieldsOf(t, r); r.status != 400 || len(f) != 1 || f[0] != "newPassword" {
			t.Fatalf("a password of spaces: %d %s", r.status, r.body)
		}
		var last response
		e.clock.StartMinute()
		for i := 0; i < 11; i++ {
			last = e.mg("POST", path, viewer, map[string]any{"currentPassword": "wrong horse battery", "newPassword": "a new password"})
			if i < 10 && last.status != 400 {
				t.Fatalf("wrong current password %d: %d %s", i+1, last.status, last.body)
			}
		}
		wantProblem(t, "the 11th wrong current password", last, 429, "RATE_LIMITED")
		if last.header.Get("Retry-After") == "" {
			t.Fatal("no Retry-After")
		}
		// Even the right one waits for the window: nothing was hashed.
		wantProblem(t, "the right one while throttled",
			e.mg("POST", path, viewer, map[string]any{"currentPassword": testPassword, "newPassword": "a new password"}), 429, "RATE_LIMITED")
		e.clock.Advance(61e9)
		if r := e.mg("POST", path, viewer, map[string]any{"currentPassword": testPassword, "newPassword": "a new password"}); r.status != 204 {
			t.Fatalf("a minute later: %d %s", r.status, r.body)
		}
	})
}

// The hostile test's open redirect: /login?next=%2F%09%2Fevil.example
// answered Location: /<TAB>/evil.example, which browsers follow to
// //evil.example. Such a destination now goes home.
func TestLoginRedirectStaysHome(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	email := e.user("owner")
	for _, next := range []string{"/\t/evil.example", "/\n/evil.example", "/ /evil.example", "/\\evil.example", "//evil.example"} {
		if p := e.browser().get("/login?next=" + url.QueryEscape(next)); strings.Contains(p.body, "evil.example") {
			t.Fatalf("the login page keeps next=%q", next)
		}
		b := e.browser()
		p := b.post("/login", url.Values{"email": {email}, "password": {testPassword}, "next": {next}})
		if p.status != 303 || p.header.Get("Location") != "/" {
			t.Fatalf("next=%q: %d Location %q", next, p.status, p.header.Get("Location"))
		}
	}
	b := e.browser()
	if p := b.post("/login", url.Values{"email": {email}, "password": {testPassword}, "next": {"/messages?status=FAILED"}}); p.header.Get("Location") != "/messages?status=FAILED" {
		t.Fatalf("a path of the site: %q", p.header.Get("Location"))
	}
}

// An email has one user in the whole deployment, so refusing one tells an
// owner it has a user somewhere: owners learn that at most 10 times a
// minute, and the answer does not say which account.
func TestOwnersCannotWalkEmails(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	owner := e.member("owner")
	taken := e.user("viewer")
	var last response
	e.clock.StartMinute()
	for i := 0; i < 11; i++ {
		last = e.mg("POST", "/api/v1/manage/users", owner, map[string]any{"email": taken, "role": "viewer"})
		if i < 10 && (last.status != 400 || strings.Contains(string(last.body), e.account.ID)) {
			t.Fatalf("probe %d: %d %s", i+1, last.status, last.body)
		}
	}
	wantProblem(t, "the 11th taken email in a minute", last, 429, "RATE_LIMITED")
	wantProblem(t, "even a free one while throttled", e.mg("POST", "/api/v1/manage/users", owner,
		map[string]any{"email": "free@acme.example", "role": "viewer"}), 429, "RATE_LIMITED")
	e.clock.Advance(61e9)
	if r := e.mg("POST", "/api/v1/manage/users", owner, map[string]any{"email": "free@acme.example", "role": "viewer"}); r.status != 201 {
		t.Fatalf("a minute later: %d %s", r.status, r.body)
	}
}
