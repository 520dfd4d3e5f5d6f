package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/nodetest"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// msgsvc account create --reseller, and --parent for its children: a
// child's opening credits come out of its parent's balance.
func TestAccountCreateReseller(t *testing.T) {
	db := storetest.Migrated(t, "sqlite")
	create := func(args ...string) (map[string]any, string, int) {
		t.Helper()
		out, errs, code := runMain(t, append([]string{"account", "create", "--db", db, "--json"}, args...)...)
		var m map[string]any
		if code == 0 {
			if err := json.Unmarshal([]byte(out), &m); err != nil {
				t.Fatalf("account create printed %q", out)
			}
		}
		return m, errs, code
	}
	top, errs, code := create("--name", "Reseller", "--reseller", "--credits", "50", "--currency", "EUR", "--country", "34")
	if code != 0 || top["reseller"] != true || top["parentId"] != nil {
		t.Fatalf("reseller: %d %v %s", code, top, errs)
	}
	plain, _, _ := create("--name", "Plain")
	if _, errs, code := create("--name", "Orphan", "--parent", plain["id"].(string)); code == 0 || !strings.Contains(errs, "not a reseller") {
		t.Fatalf("a child of a plain account: %d %s", code, errs)
	}
	child, errs, code := create("--name", "Customer", "--parent", top["id"].(string), "--credits", "20", "--country", "34", "--reseller")
	if code != 0 || child["parentId"] != top["id"] || child["currency"] != "EUR" || child["balance"] != 20.0 || child["reseller"] != true {
		t.Fatalf("child: %d %v %s", code, child, errs)
	}
	grand, _, code := create("--name", "End", "--parent", child["id"].(string))
	if code != 0 {
		t.Fatalf("grandchild: %d", code)
	}
	if _, errs, code := create("--name", "Too deep", "--parent", grand["id"].(string)); code == 0 || !strings.Contains(errs, "not a reseller") {
		t.Fatalf("below a leaf: %d %s", code, errs)
	}
	if _, errs, code := create("--name", "Deep reseller", "--parent", child["id"].(string), "--reseller"); code == 0 ||
		!strings.Contains(errs, "levels deep") {
		t.Fatalf("a reseller at the third level: %d %s", code, errs)
	}
	if _, errs, code := create("--name", "Greedy", "--parent", top["id"].(string), "--credits", "31"); code == 0 || !strings.Contains(errs, "does not cover") {
		t.Fatalf("more than the parent has: %d %s", code, errs)
	}
	st := nodetest.OpenStore(t, db)
	ctx := context.Background()
	if kids, _ := st.Children(ctx, top["id"].(string)); len(kids) != 1 {
		t.Fatalf("the refused child was left behind: %d children", len(kids))
	}
	for _, id := range []string{top["id"].(string), child["id"].(string)} {
		a, err := st.Account(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if sum, _ := st.LedgerSum(ctx, id); sum != a.Balance {
			t.Fatalf("%s: ledger %d, balance %d", id, sum, a.Balance)
		}
	}
	if a, _ := st.Account(ctx, top["id"].(string)); a.Balance != 30_000000 {
		t.Fatalf("reseller's balance after funding its child: %d", a.Balance)
	}
}
