package twilio

import (
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/intake"
)

// TestSuspendedAccount: a suspended account's credentials are refused with
// 403 and Twilio's 10001 on every resource, sends included, while another
// account goes on; the cache drops the suspension once the auth counter
// moves, and nothing counts against the address.
func TestSuspendedAccount(t *testing.T) {
	w := twoAccounts(t)
	g := &failures{n: map[string]int{}}
	w.h.cfg.Guard, w.h.cfg.AuthFailuresPerMinute = g, 3
	// Cached before the suspension: the counter's move must bite at once.
	if status, b, _ := w.call("GET", msgsPath(acA), acA, "token-"+acA, nil); status != 200 {
		t.Fatalf("before: %d %v", status, b)
	}
	w.mu.Lock()
	a := w.accounts["acc_a"]
	a.SuspendedAt, a.SuspendedBy = w.now, "acc_parent"
	w.accounts["acc_a"] = a
	w.version++
	w.mu.Unlock()
	for _, tc := range []struct {
		name, method, path, user, secret string
	}{
		{"list", "GET", msgsPath(acA), acA, "token-" + acA},
		{"send", "POST", msgsPath(acA), acA, "token-" + acA},
		{"an API key", "GET", msgsPath(acA), skA, "secret-" + skA},
		{"the account", "GET", Base + "Accounts/" + acA + ".json", acA, "token-" + acA},
	} {
		for range 4 { // more than the failure budget: none of it is spent
			var form = send("+447700900123", "+15550001111", "x")
			if tc.method == "GET" {
				form = nil
			}
			status, b, _ := w.call(tc.method, tc.path, tc.user, tc.secret, form)
			if status != 403 || code(b) != 10001 {
				t.Fatalf("%s: got %d %v, want 403 with 10001", tc.name, status, b)
			}
		}
	}
	if len(w.sends) != 0 {
		t.Errorf("%d sends reached the core", len(w.sends))
	}
	if len(g.n) != 0 {
		t.Errorf("refusals counted as failures: %v", g.n)
	}
	if status, b, _ := w.call("GET", msgsPath(acB), acB, "token-"+acB, nil); status != 200 {
		t.Fatalf("another account: %d %v", status, b)
	}
	// The core's own refusal (a principal it finds suspended) reads the same.
	if e := toError(intake.ErrSuspended); e.Status != 403 || e.Code != 10001 {
		t.Errorf("the core's refusal: %+v", e)
	}

	w.mu.Lock()
	a.SuspendedAt, a.SuspendedBy = time.Time{}, ""
	w.accounts["acc_a"] = a
	w.version++
	w.mu.Unlock()
	if status, b, _ := w.call("POST", msgsPath(acA), acA, "token-"+acA, send("+447700900123", "+15550001111", "x")); status != 201 {
		t.Fatalf("resumed: %d %v", status, b)
	}
}
