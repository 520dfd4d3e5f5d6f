package app

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// The management API (docs/panel.md): sessions, keys, security and
// senders, on every dialect through the running node.

const testPassword = "correct horse battery"

// member adds a user of the env's account (or an operator, for role
// "operator") and logs them in to the management API; it returns the
// session token.
func (e *env) member(role string) string {
	e.t.Helper()
	return e.login(e.user(role), testPassword)
}

func (e *env) login(email, password string) string {
	e.t.Helper()
	r := e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": email, "password": password})
	if r.status != 200 {
		e.t.Fatalf("login %s: %d %s", email, r.status, r.body)
	}
	return r.json(e.t)["token"].(string)
}

// mg calls the management API with a session token ("" for none).
func (e *env) mg(method, path, token string, body any) response {
	e.t.Helper()
	if token == "" {
		return e.do(method, path, "", body)
	}
	return e.do(method, path, "", body, "Authorization", "Bearer "+token)
}

// wantProblem checks a problem answer's status and code.
func wantProblem(t *testing.T, what string, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: %d %s, want %d %s", what, r.status, r.body, status, code)
	}
	if got := r.json(t)["code"]; got != code {
		t.Fatalf("%s: code %v, want %s (%s)", what, got, code, r.body)
	}
}

func TestManageSessions(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		_, _, err := createTestUser(context.Background(), e.st, e.account.ID, "Ana@Acme.example", "owner", testPassword, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		wantProblem(t, "wrong password", e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "ana@acme.example",
			"password": "wrong horse battery"}), 401, "INVALID_CREDENTIALS")
		wantProblem(t, "unknown email", e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "nobody@acme.example",
			"password": testPassword}), 401, "INVALID_CREDENTIALS")
		login := e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "ana@acme.example", "password": testPassword})
		body := login.json(t)
		token, _ := body["token"].(string)
		exp, err := time.Parse(time.RFC3339, body["expiresAt"].(string))
		if err != nil || login.status != 200 || !strings.HasPrefix(token, "sess_") || exp.Sub(e.clock.Now()) < 11*time.Hour {
			t.Fatalf("login: %d %s", login.status, login.body)
		}

		wantProblem(t, "a made-up token", e.mg("GET", "/api/v1/manage/keys", "sess_"+strings.Repeat("A", 43), nil), 401, "INVALID_TOKEN")
		if r := e.mg("GET", "/api/v1/manage/keys", token, nil); r.status != 200 {
			t.Fatalf("keys with a fresh session: %d %s", r.status, r.body)
		}

		// Idle expiry slides: 11 h idle twice is fine, 12 h idle is not.
		e.clock.Advance(11 * time.Hour)
		if r := e.mg("GET", "/api/v1/manage/keys", token, nil); r.status != 200 {
			t.Fatalf("after 11 h idle: %d %s", r.status, r.body)
		}
		e.clock.Advance(11 * time.Hour)
		if r := e.mg("GET", "/api/v1/manage/keys", token, nil); r.status != 200 {
			t.Fatalf("after 11 h idle again: %d %s", r.status, r.body)
		}
		e.clock.Advance(12*time.Hour + time.Second)
		wantProblem(t, "after 12 h idle", e.mg("GET", "/api/v1/manage/keys", token, nil), 401, "TOKEN_EXPIRED")

		// Logout ends a session; the token is then unknown.
		token = e.login("ana@acme.example", testPassword)
		other := e.login("ana@acme.example", testPassword)
		if r := e.mg("POST", "/api/v1/auth/logout", other, nil); r.status != 204 {
			t.Fatalf("logout: %d %s", r.status, r.body)
		}
		wantProblem(t, "after logout", e.mg("GET", "/api/v1/manage/keys", other, nil), 401, "INVALID_TOKEN")
		wantProblem(t, "logout twice", e.mg("POST", "/api/v1/auth/logout", other, nil), 401, "INVALID_TOKEN")

		// A password change checks the current one and ends the other sessions.
		other = e.login("ana@acme.example", testPassword)
		r := e.mg("POST", "/api/v1/auth/password", token, map[string]any{"currentPassword": "nope", "newPassword": "a new long password"})
		if f := fieldsOf(t, r); r.status != 400 || len(f) != 1 || f[0] != "currentPassword" {
			t.Fatalf("wrong current password: %d %s", r.status, r.body)
		}
		r = e.mg("POST", "/api/v1/auth/password", token, map[string]any{"currentPassword": testPassword, "newPassword": "short"})
		if f := fieldsOf(t, r); r.status != 400 || len(f) != 1 || f[0] != "newPassword" {
			t.Fatalf("short new password: %d %s", r.status, r.body)
		}
		if r := e.mg("POST", "/api/v1/auth/password", token, map[string]any{"currentPassword": testPassword,
			"newPassword": "a new long password"}); r.status != 204 {
			t.Fatalf("password change: %d %s", r.status, r.body)
		}
		wantProblem(t, "another session after the change", e.mg("GET", "/api/v1/manage/keys", other, nil), 401, "INVALID_TOKEN")
		if r := e.mg("GET", "/api/v1/manage/keys", token, nil); r.status != 200 {
			t.Fatalf("the changing session: %d %s", r.status, r.body)
		}
		wantProblem(t, "old password", e.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "ana@acme.example",
			"password": testPassword}), 401, "INVALID_CREDENTIALS")
		e.login("ana@acme.example", "a new long password")
	})
}

// Login throttling counts failures per client address (the budget failed
// API keys count against too) and refuses that address once its budget is
// used up, even with the right password; it never refuses anyone for
// failures from another address. The clock is placed at the start of a
// minute so that the window cannot turn during the test.
func TestLoginThrottle(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{config: func(c *config.Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	}})
	if _, _, err := createTestUser(context.Background(), e.st, e.account.ID, "ana@acme.example", "owner", testPassword, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	e.placeAt(time.Second)
	attacker := []string{"X-Forwarded-For", "198.51.100.1"}
	bad := map[string]any{"email": "ana@acme.example", "password": "wrong horse battery"}
	r := e.do("POST", "/api/v1/auth/login", "", bad, attacker...)
	if r.status != 401 || r.header.Get("X-RateLimit-Limit") != "30" || r.header.Get("X-RateLimit-Remaining") != "29" {
		t.Fatalf("a failed login is not counted: %d %v", r.status, r.header)
	}
	for i := 0; i < 29; i++ {
		e.do("GET", "/api/v1/integration/balance", "svc_test_"+strings.Repeat("x", 40), nil, attacker...)
	}
	good := map[string]any{"email": "ana@acme.example", "password": testPassword}
	wantProblem(t, "the right password from the throttled address", e.do("POST", "/api/v1/auth/login", "", good, attacker...),
		429, "RATE_LIMITED")
	wantProblem(t, "a wrong one", e.do("POST", "/api/v1/auth/login", "", bad, attacker...), 429, "RATE_LIMITED")
	if ok := e.do("POST", "/api/v1/auth/login", "", good, "X-Forwarded-For", "203.0.113.9"); ok.status != 200 {
		t.Fatalf("the user from another address: %d %s", ok.status, ok.body)
	}
}

func TestManageKeys(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		dev, viewer := e.member("developer"), e.member("viewer")
		r := e.mg("POST", "/api/v1/manage/keys", dev, map[string]any{"environment": "test", "name": "billing worker"})
		k := r.json(t)
		secret, _ := k["key"].(string)
		if r.status != 201 || !strings.HasPrefix(secret, "svc_test_") || len(secret) != 49 || k["name"] != "billing worker" ||
			k["environment"] != "test" || !strings.HasPrefix(secret, k["prefix"].(string)) || k["lastUsedAt"] != nil || k["revokedAt"] != nil {
			t.Fatalf("create key: %d %s", r.status, r.body)
		}
		if b := e.do("GET", "/api/v1/integration/balance", secret, nil); b.status != 200 {
			t.Fatalf("the new key: %d %s", b.status, b.body)
		}
		for _, bad := range []map[string]any{{"environment": "prod"}, {"environment": "live", "name": strings.Repeat("n", 65)}} {
			if r := e.mg("POST", "/api/v1/manage/keys", dev, bad); r.status != 400 {
				t.Errorf("create key %v: %d %s", bad, r.status, r.body)
			}
		}
		wantProblem(t, "a viewer creating a key", e.mg("POST", "/api/v1/manage/keys", viewer, map[string]any{"environment": "test"}), 403, "FORBIDDEN")

		list := e.mg("GET", "/api/v1/manage/keys", viewer, nil)
		keys, _ := list.json(t)["keys"].([]any)
		if list.status != 200 || len(keys) != 3 || keys[0].(map[string]any)["id"] != k["id"] {
			t.Fatalf("a viewer's list, newest first: %d %s", list.status, list.body)
		}
		if keys[0].(map[string]any)["lastUsedAt"] == nil || strings.Contains(string(list.body), secret) {
			t.Fatalf("list shows no last use, or the key itself: %s", list.body)
		}

		path := "/api/v1/manage/keys/" + k["id"].(string)
		wantProblem(t, "a viewer revoking", e.mg("DELETE", path, viewer, nil), 403, "FORBIDDEN")
		if b := e.do("GET", "/api/v1/integration/balance", secret, nil); b.status != 200 {
			t.Fatalf("the key after a refused revoke: %d", b.status)
		}
		if r := e.mg("DELETE", path, dev, nil); r.status != 204 {
			t.Fatalf("revoke: %d %s", r.status, r.body)
		}
		wantProblem(t, "the revoked key's next request", e.do("GET", "/api/v1/integration/balance", secret, nil), 401, "INVALID_API_KEY")
		wantProblem(t, "revoking twice", e.mg("DELETE", path, dev, nil), 404, "NOT_FOUND")
		wantProblem(t, "revoking an unknown key", e.mg("DELETE", "/api/v1/manage/keys/key_nope", dev, nil), 404, "NOT_FOUND")
		keys, _ = e.mg("GET", "/api/v1/manage/keys", dev, nil).json(t)["keys"].([]any)
		if keys[0].(map[string]any)["revokedAt"] == nil {
			t.Fatalf("the list does not show the revocation: %v", keys[0])
		}
	})
}

func TestManageSecurity(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		admin, dev, viewer := e.member("admin"), e.member("developer"), e.member("viewer")
		const path = "/api/v1/manage/security/ip-allowlist"
		if r := e.mg("GET", path, viewer, nil); r.status != 200 || string(r.body) != `{"entries":[]}`+"\n" {
			t.Fatalf("empty allow-list: %d %s", r.status, r.body)
		}
		r := e.mg("PUT", path, admin, map[string]any{"entries": []string{"203.0.113.7", "not-an-ip", "2001:db8::/32", "10.0.0.1/33"}})
		if f := fieldsOf(t, r); r.status != 400 || len(f) != 2 || f[0] != "entries[1]" || f[1] != "entries[3]" {
			t.Fatalf("invalid entries: %d %s", r.status, r.body)
		}
		if b := e.do("GET", "/api/v1/integration/balance", e.testKey, nil); b.status != 200 {
			t.Fatalf("a refused change changed something: %d", b.status)
		}
		wantProblem(t, "a developer changing the allow-list", e.mg("PUT", path, dev, map[string]any{"entries": []string{"203.0.113.7"}}),
			403, "FORBIDDEN")
		r = e.mg("PUT", path, admin, map[string]any{"entries": []string{" 203.0.113.7", "2001:DB8::/32", "198.51.100.9/24", "203.0.113.7"}})
		if r.status != 200 || string(r.body) != `{"entries":["203.0.113.7","2001:db8::/32","198.51.100.0/24"]}`+"\n" {
			t.Fatalf("set allow-list: %d %s", r.status, r.body)
		}
		wantProblem(t, "a request from outside the list", e.do("GET", "/api/v1/integration/balance", e.testKey, nil), 403, "IP_NOT_ALLOWED")
		if r := e.mg("GET", "/api/v1/manage/keys", viewer, nil); r.status != 200 {
			t.Fatalf("the panel is not behind the allow-list: %d", r.status)
		}
		if r := e.mg("PUT", path, admin, map[string]any{"entries": []string{"127.0.0.0/8"}}); r.status != 200 {
			t.Fatalf("allow loopback: %d %s", r.status, r.body)
		}
		if b := e.do("GET", "/api/v1/integration/balance", e.testKey, nil); b.status != 200 {
			t.Fatalf("a request from a listed range: %d", b.status)
		}
		if r := e.mg("PUT", path, admin, map[string]any{"entries": []string{}}); r.status != 200 {
			t.Fatalf("lift: %d %s", r.status, r.body)
		}

		const rotate = "/api/v1/manage/webhook-secret/rotate"
		wantProblem(t, "a developer rotating the secret", e.mg("POST", rotate, dev, nil), 403, "FORBIDDEN")
		r = e.mg("POST", rotate, admin, nil)
		body := r.json(t)
		until, _ := time.Parse(time.RFC3339, body["previousValidUntil"].(string))
		secret, _ := body["secret"].(string)
		if r.status != 200 || !strings.HasPrefix(secret, "whsec_") || secret == e.account.WebhookSecret ||
			until.Sub(e.clock.Now()) < 23*time.Hour || until.Sub(e.clock.Now()) > 24*time.Hour {
			t.Fatalf("rotate: %d %s", r.status, r.body)
		}
		// The deliverer reads secrets at most every few seconds.
		e.clock.Advance(6 * time.Second)
		m := send(t, e, e.testKey, map[string]any{"to": "5511999990010", "message": "hi", "type": "SMS", "callbackUrl": e.hooks.url()})
		mid := m.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		polltest.For(t, "a webhook", 10*time.Second, func() bool { return len(e.hooks.forMessage(mid)) > 0 })
		for _, h := range e.hooks.all() {
			if sigs := strings.Fields(h.header.Get("webhook-signature")); len(sigs) != 2 {
				t.Fatalf("during the rotation a webhook carries %d signatures: %v", len(sigs), sigs)
			}
		}
	})
}

func TestManageSenders(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		admin, dev := e.member("admin"), e.member("developer")
		const path = "/api/v1/manage/senders"
		wantProblem(t, "a developer adding a sender", e.mg("POST", path, dev, map[string]any{"channel": "SMS", "value": "MyShop"}), 403, "FORBIDDEN")
		r := e.mg("POST", path, admin, map[string]any{"channel": "SMS", "value": "MyShop!"})
		if f := fieldsOf(t, r); r.status != 400 || len(f) != 1 || f[0] != "value" {
			t.Fatalf("invalid sender: %d %s", r.status, r.body)
		}
		r = e.mg("POST", path, admin, map[string]any{"channel": "SMS", "value": "MyShop", "default": true})
		sd := r.json(t)
		if r.status != 201 || sd["channel"] != "SMS" || sd["value"] != "MyShop" || sd["default"] != true || sd["status"] != "PENDING" {
			t.Fatalf("add sender: %d %s", r.status, r.body)
		}
		if r := e.mg("POST", path+"/"+sd["id"].(string)+"/approve", e.member("operator"), nil); r.status != 200 {
			t.Fatalf("approve sender: %d %s", r.status, r.body)
		}
		if r := e.mg("POST", path, admin, map[string]any{"channel": "SMS", "value": "MyShop"}); r.status != 400 {
			t.Fatalf("the same sender twice: %d %s", r.status, r.body)
		}
		list := e.mg("GET", path, dev, nil)
		if got, _ := list.json(t)["senders"].([]any); list.status != 200 || len(got) != 1 {
			t.Fatalf("list: %d %s", list.status, list.body)
		}
		s := send(t, e, e.testKey, map[string]any{"to": "5511999990010", "message": "hi", "type": "SMS"})
		mid := s.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		if m := e.do("GET", "/api/v1/integration/messages/"+mid, e.testKey, nil).json(t); m["from"] != "MyShop" {
			t.Fatalf("the default sender is not used: %v", m["from"])
		}
		wantProblem(t, "a developer removing", e.mg("DELETE", path+"/"+sd["id"].(string), dev, nil), 403, "FORBIDDEN")
		if r := e.mg("DELETE", path+"/"+sd["id"].(string), admin, nil); r.status != 204 {
			t.Fatalf("remove: %d %s", r.status, r.body)
		}
		wantProblem(t, "removing twice", e.mg("DELETE", path+"/"+sd["id"].(string), admin, nil), 404, "NOT_FOUND")
		s = send(t, e, e.testKey, map[string]any{"to": "5511999990010", "message": "hi", "type": "SMS", "from": "MyShop"})
		if f := fieldsOf(t, s); s.status != 400 || len(f) != 1 || f[0] != "from" {
			t.Fatalf("a removed sender still sends: %d %s", s.status, s.body)
		}
	})
}

func TestManageUsers(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		owner := e.member("owner")
		r := e.mg("POST", "/api/v1/manage/users", owner, map[string]any{"email": "Dev@Acme.example", "role": "developer"})
		u := r.json(t)
		pw, _ := u["password"].(string)
		if r.status != 201 || u["email"] != "dev@acme.example" || u["role"] != "developer" || len(pw) < 20 {
			t.Fatalf("add user: %d %s", r.status, r.body)
		}
		dev := e.login("dev@acme.example", pw)
		if r := e.mg("POST", "/api/v1/manage/users", owner, map[string]any{"email": "dev@acme.example", "role": "viewer"}); r.status != 400 ||
			fieldsOf(t, r)[0] != "email" {
			t.Fatalf("a taken email: %d %s", r.status, r.body)
		}
		for _, role := range []string{"operator", "boss"} {
			if r := e.mg("POST", "/api/v1/manage/users", owner, map[string]any{"email": "x@acme.example", "role": role}); r.status != 400 ||
				fieldsOf(t, r)[0] != "role" {
				t.Fatalf("role %s: %d %s", role, r.status, r.body)
			}
		}
		r = e.mg("POST", "/api/v1/manage/users", owner, map[string]any{"email": "view@acme.example", "role": "viewer", "password": "a chosen password"})
		if r.status != 201 || r.json(t)["password"] != nil {
			t.Fatalf("a given password is echoed: %d %s", r.status, r.body)
		}
		wantProblem(t, "a developer listing users", e.mg("GET", "/api/v1/manage/users", dev, nil), 403, "FORBIDDEN")
		list, _ := e.mg("GET", "/api/v1/manage/users", owner, nil).json(t)["users"].([]any)
		if len(list) != 3 || strings.Contains(fmt.Sprint(list), "password") {
			t.Fatalf("users: %v", list)
		}
		if r := e.mg("DELETE", "/api/v1/manage/users/"+u["id"].(string), owner, nil); r.status != 204 {
			t.Fatalf("remove: %d %s", r.status, r.body)
		}
		wantProblem(t, "a removed user's session", e.mg("GET", "/api/v1/manage/keys", dev, nil), 401, "INVALID_TOKEN")
		wantProblem(t, "removing twice", e.mg("DELETE", "/api/v1/manage/users/"+u["id"].(string), owner, nil), 404, "NOT_FOUND")
		other := e.addAccount(NewAccount{Name: "Other", Tier: "free", Currency: "USD", Country: "1"})
		theirs, _, err := createTestUser(context.Background(), e.st, other.ID, "x@other.example", "owner", testPassword, e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		wantProblem(t, "removing another account's user", e.mg("DELETE", "/api/v1/manage/users/"+theirs.ID, owner, nil), 404, "NOT_FOUND")
	})
}
