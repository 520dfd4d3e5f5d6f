package api

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// fakeManager knows one user's password and one session token; the
// management areas a test does not drive are left to the nil Manager, so
// calling one fails the test with a panic.
type fakeManager struct {
	Manager
	password, token string
	expired         bool
	authErr         error
}

func (f *fakeManager) LoginFrom(_ context.Context, _, email, password string) (manage.Session, error) {
	if email != "ana@acme.example" || password != f.password {
		return manage.Session{}, manage.ErrBadCredentials
	}
	return manage.Session{Token: f.token, ExpiresAt: time.Date(2026, 3, 2, 21, 0, 0, 0, time.UTC)}, nil
}

func (f *fakeManager) Authenticate(_ context.Context, token string) (manage.Actor, error) {
	switch {
	case f.authErr != nil:
		return manage.Actor{}, f.authErr
	case token != f.token:
		return manage.Actor{}, manage.ErrInvalidToken
	case f.expired:
		return manage.Actor{}, manage.ErrTokenExpired
	}
	return manage.Actor{UserID: "usr_1", Role: "owner", AccountID: "acc_1"}, nil
}

func (f *fakeManager) Keys(context.Context, manage.Actor, string) ([]domain.APIKey, error) {
	return nil, nil
}

const testPassword = "correct horse battery staple"

// Sessions on the wire: a session token is taken only as Authorization:
// Bearer on the management API, never an API key, and never on the
// integration API; failures count against the address like failed keys.
func TestSessionTokens(t *testing.T) {
	mg := &fakeManager{password: testPassword, token: "sess_" + strings.Repeat("S", 43)}
	h := newHarness(t, func(c *Config) { c.Manage = mg })
	reset := h.clock.placeAt(time.Second)
	keys := "/api/v1/manage/keys"
	bearer := func(token string) []string { return []string{"Authorization", "Bearer " + token} }

	login := h.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "ana@acme.example", "password": testPassword})
	body := login.json(t)
	if login.status != 200 || body["token"] != mg.token || body["expiresAt"] != "2026-03-02T21:00:00.000Z" {
		t.Fatalf("login: %d %s", login.status, login.body)
	}
	if login.header.Get("Cache-Control") != "no-store" {
		t.Error("the login answer may be cached")
	}
	// Leaving out a field is a malformed request, not a failed login.
	r := h.do("POST", "/api/v1/auth/login", "", map[string]any{"email": " "})
	checkProblem(t, "no email, no password", r, 400, "VALIDATION_ERROR")
	if got := strings.Join(r.fields(t), ","); got != "email,password" {
		t.Errorf("missing fields named %s", got)
	}
	failures := 0
	for _, c := range []struct {
		name    string
		r       response
		status  int
		code    string
		counted bool
	}{
		{"wrong password", h.do("POST", "/api/v1/auth/login", "", map[string]any{"email": "ana@acme.example", "password": "wrong"}), 401, "INVALID_CREDENTIALS", true},
		{"no token", h.do("GET", keys, "", nil), 401, "INVALID_TOKEN", true},
		{"an API key as the token", h.do("GET", keys, "", nil, bearer(h.testKey)...), 401, "INVALID_TOKEN", true},
		{"an API key in X-API-KEY", h.do("GET", keys, h.testKey, nil), 401, "INVALID_TOKEN", true},
		{"a session token on the integration API", h.do("GET", balancePath, "", nil, bearer(mg.token)...), 401, "INVALID_API_KEY", true},
		{"the session", h.do("GET", keys, "", nil, bearer(mg.token)...), 200, "", false},
	} {
		if c.code != "" {
			checkProblem(t, c.name, c.r, c.status, c.code)
		} else if c.r.status != c.status {
			t.Fatalf("%s: %d %s", c.name, c.r.status, c.r.body)
		}
		if c.counted {
			failures++
			if got, want := rateHeaders(t, c.r), windows(30-failures, 30, 30-failures, 30, reset); got != want {
				t.Errorf("%s: headers %s, want %s", c.name, got, want)
			}
		}
		// The management API's answers, refusals included, are never cached.
		if manages := c.code == "INVALID_TOKEN" || c.code == ""; manages && c.r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: the answer may be cached", c.name)
		}
	}
	mg.expired = true
	checkProblem(t, "expired", h.do("GET", keys, "", nil, bearer(mg.token)...), 401, "TOKEN_EXPIRED")
	// Storage that fails is not the client's failure: nothing is counted.
	mg.authErr = errors.New("disk on fire")
	r = h.do("GET", keys, "", nil, bearer(mg.token)...)
	checkProblem(t, "storage failure", r, 500, "INTERNAL")
	if r.header.Get("X-RateLimit-Remaining") != "" {
		t.Errorf("a storage failure shows the failure window: %v", r.header)
	}
	failures++ // the expired token
	if got, want := rateHeaders(t, h.do("GET", balancePath, "nope", nil)), windows(30-failures-1, 30, 30-failures-1, 30, reset); got != want {
		t.Errorf("after the storage failure: headers %s, want %s", got, want)
	}
	// Logging out without a token names the header to send.
	checkProblem(t, "logout without a token", h.do("POST", "/api/v1/auth/logout", "", nil), 401, "INVALID_TOKEN")
}

// fakeOptOuts counts the pages it is asked for.
type fakeOptOuts struct{ reads int }

func (f *fakeOptOuts) List(context.Context, string, domain.Environment, string, int) (compliance.Page, error) {
	f.reads++
	return compliance.Page{}, nil
}

// Every list parameter that is wrong is named, and no read is made.
func TestListParameters(t *testing.T) {
	optOuts := &fakeOptOuts{}
	h := newHarness(t, func(c *Config) { c.OptOuts = optOuts })
	cases := []struct{ path, fields string }{
		{"/api/v1/integration/events?after=nope", "after"},
		{"/api/v1/integration/events?after=bXNnXzE", "after"},
		{"/api/v1/integration/events?limit=0", "limit"},
		{"/api/v1/integration/events?limit=1001", "limit"},
		{"/api/v1/integration/events?limit=x", "limit"},
		{"/api/v1/integration/events?cursor=abc", "cursor"},
		{"/api/v1/integration/events?after=ZjEuMQ&after=ZjEuMQ", "after"},
		{"/api/v1/integration/messages?status=LOST", "status"},
		{"/api/v1/integration/messages?to=12", "to"},
		{"/api/v1/integration/messages?to=55119999900x0", "to"},
		{"/api/v1/integration/messages?createdFrom=yesterday", "createdFrom"},
		{"/api/v1/integration/messages?createdFrom=2030-01-02T00:00:00Z&createdTo=2030-01-01T00:00:00Z", "createdTo"},
		{"/api/v1/integration/messages?limit=1001", "limit"},
		{"/api/v1/integration/messages?cursor=ZjEuMQ", "cursor"},
		{"/api/v1/integration/messages?sttaus=FAILED", "sttaus"},
		{"/api/v1/integration/messages?status=SENT&status=FAILED", "status"},
		{"/api/v1/integration/messages?reference=" + strings.Repeat("r", 129), "reference"},
		{"/api/v1/integration/messages?status=LOST&to=12&limit=0", "status,to,limit"},
		{"/api/v1/integration/usage?from=2026-13-01", "from"},
		{"/api/v1/integration/usage?from=2026-11-25&to=2026-11-24", "to"},
		{"/api/v1/integration/usage?from=2024-01-01&to=2026-01-01", "from"},
		{"/api/v1/integration/usage?groupBy=week&channel=fax", "groupBy,channel"},
		{"/api/v1/integration/usage?account=acc_x", "account"},
		{"/api/v1/integration/opt-outs?limit=0", "limit"},
	}
	h2 := newHarness(t, func(c *Config) { c.OptOuts = nil })
	for _, c := range cases {
		r := h.do("GET", c.path, h.testKey, nil)
		checkProblem(t, c.path, r, 400, "VALIDATION_ERROR")
		if got := strings.Join(r.fields(t), ","); got != c.fields {
			t.Errorf("%s: names %s, want %s", c.path, got, c.fields)
		}
	}
	if h.msgs.listed != 0 || optOuts.reads != 0 {
		t.Errorf("%d refused lists were read", h.msgs.listed+optOuts.reads)
	}
	if r := h.do("GET", "/api/v1/integration/opt-outs?limit=5", h.testKey, nil); r.status != 200 || optOuts.reads != 1 {
		t.Errorf("opt-outs: %d %s", r.status, r.body)
	}
	checkProblem(t, "usage without a key", h.do("GET", "/api/v1/integration/usage", "", nil), 401, "MISSING_API_KEY")
	checkProblem(t, "opt-outs not served", h2.do("GET", "/api/v1/integration/opt-outs", h2.testKey, nil), 404, "NOT_FOUND")
}

// The list's cursor is the service's, wrapped: it comes back as it went.
func TestListCursor(t *testing.T) {
	h := newHarness(t)
	h.msgs.next = "msg_5"
	r := h.do("GET", "/api/v1/integration/messages?limit=2&status=sent&to=%2B5511999990000", h.testKey, nil)
	next, _ := r.json(t)["nextCursor"].(string)
	if r.status != 200 || next == "" || strings.Contains(next, "msg_") {
		t.Fatalf("first page: %d %s", r.status, r.body)
	}
	if f := h.msgs.filter; f.Limit != 2 || f.Status != domain.Sent || f.To != "5511999990000" || f.After != "" {
		t.Fatalf("first page asked for %+v", f)
	}
	h.msgs.next = ""
	r = h.do("GET", "/api/v1/integration/messages?cursor="+next, h.testKey, nil)
	if r.status != 200 || r.json(t)["nextCursor"] != nil || h.msgs.filter.After != "msg_5" {
		t.Fatalf("second page: %d %s after %q", r.status, r.body, h.msgs.filter.After)
	}
	if got := base64.RawURLEncoding.EncodeToString([]byte("msg_5")); got != next {
		t.Errorf("cursor %s, want %s", next, got)
	}
	if r := h.do("GET", "/api/v1/integration/events", h.testKey, nil); r.status != http.StatusOK {
		t.Fatalf("events: %d %s", r.status, r.body)
	}
}
