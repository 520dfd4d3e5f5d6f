package api

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
)

// TestSuspendedAccountRefused: every request of a suspended account's
// keys is refused with 403 ACCOUNT_SUSPENDED (reads, sends, both
// environments), without reaching the core and without spending the
// address's budget of failed authentications; another account goes on,
// and the account is served again once resumed.
func TestSuspendedAccountRefused(t *testing.T) {
	h := newHarness(t)
	_, otherKey := h.newAccount("free", domain.Limits{})
	h.store.update(h.account.ID, func(a *domain.Account) {
		a.SuspendedAt, a.SuspendedBy = h.clock.Now(), "acc_parent"
	})
	for i := range 40 { // past any failure budget
		key := h.testKey
		if i%2 == 1 {
			key = h.liveKey
		}
		for _, p := range []struct{ method, path string }{
			{"GET", "/api/v1/integration/balance"},
			{"GET", "/v1/account/balance"},
			{"GET", "/api/v1/integration/messages"},
		} {
			checkProblem(t, p.method+" "+p.path, h.do(p.method, p.path, key, nil), 403, "ACCOUNT_SUSPENDED")
		}
		checkProblem(t, "send", h.send(key, map[string]any{"to": []string{"34600000001"}, "message": "hi"}), 403, "ACCOUNT_SUSPENDED")
	}
	if n := h.msgs.sent(); n != 0 {
		t.Fatalf("%d sends reached the core", n)
	}
	if r := h.do("GET", "/api/v1/integration/balance", otherKey, nil); r.status != 200 {
		t.Fatalf("another account: %d %s", r.status, r.body)
	}
	// A wrong key is still a failure, not a suspension.
	checkProblem(t, "a wrong key", h.do("GET", "/api/v1/integration/balance", "svc_test_"+strings.Repeat("x", 40), nil),
		401, "INVALID_API_KEY")

	h.store.update(h.account.ID, func(a *domain.Account) { a.SuspendedAt, a.SuspendedBy = time.Time{}, "" })
	if r := h.do("GET", "/api/v1/integration/balance", h.testKey, nil); r.status != 200 {
		t.Fatalf("resumed: %d %s", r.status, r.body)
	}
}

// suspensionManager answers the suspension actions for acc_child only,
// as the parent's user; the rest of Manager is fakeManager's.
type suspensionManager struct {
	*fakeManager
	refuse error
}

func (m *suspensionManager) SuspendAccount(_ context.Context, a manage.Actor, id string) (domain.Account, error) {
	return m.act(a, id, true)
}

func (m *suspensionManager) ResumeAccount(_ context.Context, a manage.Actor, id string) (domain.Account, error) {
	return m.act(a, id, false)
}

func (m *suspensionManager) act(a manage.Actor, id string, suspend bool) (domain.Account, error) {
	if m.refuse != nil {
		return domain.Account{}, m.refuse
	}
	if id != "acc_child" || a.AccountID != "acc_1" {
		return domain.Account{}, manage.ErrNotFound
	}
	acct := domain.Account{ID: id, ParentID: a.AccountID}
	if suspend {
		acct.SuspendedAt, acct.SuspendedBy = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), id
	}
	return acct, nil
}

// TestSuspendRoutes: the wire of POST …/accounts/{id}/suspend and
// /resume: the account's suspension in the answer, 404 for an account
// that is not the actor's child, 403 ACCOUNT_SUSPENDED for an actor whose
// own account is suspended.
func TestSuspendRoutes(t *testing.T) {
	mg := &suspensionManager{fakeManager: &fakeManager{password: testPassword, token: "sess_" + strings.Repeat("S", 43)}}
	h := newHarness(t, func(c *Config) { c.Manage = mg })
	auth := []string{"Authorization", "Bearer " + mg.token}
	base := "/api/v1/manage/accounts/"

	r := h.do("POST", base+"acc_child/suspend", "", nil, auth...)
	body := r.json(t)
	if r.status != 200 || body["id"] != "acc_child" || body["parentId"] != "acc_1" || body["suspended"] != true ||
		body["suspendedAt"] != "2026-03-02T09:00:00.000Z" || body["suspendedBy"] != "acc_child" {
		t.Fatalf("suspend: %d %s", r.status, r.body)
	}
	r = h.do("POST", base+"acc_child/resume", "", nil, auth...)
	body = r.json(t)
	if r.status != 200 || body["suspended"] != false || body["suspendedAt"] != nil || body["suspendedBy"] != "" {
		t.Fatalf("resume: %d %s", r.status, r.body)
	}
	checkProblem(t, "a sibling", h.do("POST", base+"acc_sibling/suspend", "", nil, auth...), 404, "NOT_FOUND")
	checkProblem(t, "no session", h.do("POST", base+"acc_child/suspend", "", nil), 401, "INVALID_TOKEN")
	checkProblem(t, "GET", h.do("GET", base+"acc_child/suspend", "", nil, auth...), 405, "METHOD_NOT_ALLOWED")
	mg.refuse = manage.ErrSuspended
	checkProblem(t, "a suspended parent", h.do("POST", base+"acc_child/resume", "", nil, auth...), 403, "ACCOUNT_SUSPENDED")
	mg.refuse = manage.ErrForbidden
	checkProblem(t, "a developer of the parent", h.do("POST", base+"acc_child/resume", "", nil, auth...), 403, "FORBIDDEN")
}
