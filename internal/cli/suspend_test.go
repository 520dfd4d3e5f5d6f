package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// msgsvc account suspend|resume ID: the account's suspension printed, an
// unknown id refused, and the suspension read back by the next command.
func TestAccountSuspendCommands(t *testing.T) {
	db := storetest.Migrated(t, "sqlite")
	out, _, _ := runMain(t, "account", "create", "--db", db, "--name", "Acme", "--json")
	var acc struct{ ID string }
	if err := json.Unmarshal([]byte(out), &acc); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) map[string]any {
		t.Helper()
		out, errs, code := runMain(t, append(args, "--db", db, "--json")...)
		if code != 0 {
			t.Fatalf("%v: %d %s", args, code, errs)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("%v printed %q", args, out)
		}
		return m
	}
	s := run("account", "suspend", acc.ID)
	if s["id"] != acc.ID || s["suspended"] != true || s["suspendedBy"] != acc.ID || s["suspendedAt"] == nil {
		t.Fatalf("suspend: %v", s)
	}
	if again := run("account", "suspend", acc.ID); again["suspendedAt"] != s["suspendedAt"] {
		t.Fatalf("suspending again moved the time: %v, then %v", s, again)
	}
	if r := run("account", "resume", acc.ID); r["suspended"] != false || r["suspendedBy"] != "" || r["suspendedAt"] != nil {
		t.Fatalf("resume: %v", r)
	}
	if _, errs, code := runMain(t, "account", "suspend", "acc_nope", "--db", db); code == 0 || !strings.Contains(errs, `no account "acc_nope"`) {
		t.Fatalf("an unknown account: %d %s", code, errs)
	}
	if _, errs, code := runMain(t, "account", "resume", "--db", db); code == 0 || !strings.Contains(errs, "ID is required") {
		t.Fatalf("no id: %d %s", code, errs)
	}
}
