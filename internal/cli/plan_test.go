package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/nodetest"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// msgsvc plan list|create|set and account plan: a default plan is where a
// new account starts, a changed plan reprices its accounts, and an
// account's own prices stay overrides over it.
func TestPlanCommands(t *testing.T) {
	db := storetest.Migrated(t, "sqlite")
	run := func(args ...string) map[string]any {
		t.Helper()
		out, errs, code := runMain(t, append(append([]string{}, args...), "--db", db, "--json")...)
		if code != 0 {
			t.Fatalf("%v: %d %s", args, code, errs)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("%v printed %q", args, out)
		}
		return m
	}
	if out, _, code := runMain(t, "plan", "list", "--db", db); code != 0 || !strings.Contains(out, "built-in defaults") {
		t.Fatalf("no plans: %d %q", code, out)
	}
	std := run("plan", "create", "--name", "Standard", "--default", "--prices", `{"home":{"smsSegment":0.05}}`)
	id := std["id"].(string)
	acct := run("account", "create", "--name", "Newco", "--country", "44")
	st := nodetest.OpenStore(t, db)
	ctx := context.Background()
	a, err := st.Account(ctx, acct["id"].(string))
	if err != nil || a.PricePlanID != id {
		t.Fatalf("new account's plan %q, %v", a.PricePlanID, err)
	}
	run("account", "prices", "--account", a.ID, "--set", `{"countries":{"1":{"smsSegment":0.2}}}`)
	run("plan", "set", "--plan", id, "--prices", `{"home":{"smsSegment":0.07}}`)
	if a, err = st.Account(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	p, _ := a.PriceList()
	if p.SMS("44", "44", 1) != 70_000 || p.SMS("1", "44", 1) != 200_000 || p.SMS("33", "44", 1) != 2_000_000 {
		t.Fatalf("prices after the plan changed: %+v", p)
	}
	off := run("account", "plan", "--account", a.ID, "--plan", "")
	if off["pricePlan"] != "" {
		t.Fatalf("off the plan: %v", off)
	}
	if _, errs, code := runMain(t, "account", "plan", "--account", a.ID, "--plan", "pln_nope", "--db", db); code == 0 || !strings.Contains(errs, "planId") {
		t.Fatalf("an unknown plan: %d %s", code, errs)
	}
	list := run("plan", "list")
	if plans := list["plans"].([]any); len(plans) != 1 || plans[0].(map[string]any)["accounts"] != 0.0 {
		t.Fatalf("plan list: %v", list)
	}
}
