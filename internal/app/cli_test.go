package app

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"msgsvc/internal/store"
)

func runMain(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func TestBootstrapCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "msgsvc.db")
	out, errs, code := runMain(t, "account", "create", "--db", db, "--name", "Acme", "--tier", "basic", "--credits", "12.5", "--country", "55", "--json")
	if code != 0 {
		t.Fatalf("account create: %d %s", code, errs)
	}
	var acc struct {
		ID, WebhookSecret string
		Balance           float64
		Limits            map[string]int
	}
	if err := json.Unmarshal([]byte(out), &acc); err != nil || !strings.HasPrefix(acc.WebhookSecret, "whsec_") || acc.Balance != 12.5 || acc.Limits["tierRpm"] != 30 {
		t.Fatalf("account create printed %s (%v)", out, err)
	}
	out, _, code = runMain(t, "key", "create", "--db", db, "--account", acc.ID, "--env", "live", "--json")
	var key struct{ Key, ID string }
	if code != 0 || json.Unmarshal([]byte(out), &key) != nil || !strings.HasPrefix(key.Key, "svc_live_") || len(key.Key) != 49 {
		t.Fatalf("key create printed %s", out)
	}
	if _, errs, code = runMain(t, "credits", "add", "--db", db, "--account", acc.ID, "--amount", "7.5", "--note", "invoice 1"); code != 0 {
		t.Fatalf("credits add: %s", errs)
	}
	if _, errs, code = runMain(t, "account", "limits", "--db", db, "--account", acc.ID, "--tier-rpm", "0", "--send-rpm", "5"); code != 0 {
		t.Fatalf("account limits: %s", errs)
	}
	if _, errs, code = runMain(t, "account", "settings", "--db", db, "--account", acc.ID, "--rcs-fallback", "true", "--wa-tier", "2", "--ip-allowlist", "10.0.0.0/8,::1"); code != 0 {
		t.Fatalf("account settings: %s", errs)
	}
	out, errs, code = runMain(t, "user", "create", "--db", db, "--account", acc.ID, "--email", "Ops@Acme.example", "--role", "owner", "--json")
	if code != 0 || !strings.Contains(out, `"password"`) {
		t.Fatalf("user create: %s %s", out, errs)
	}
	st := openTestStore(t, db)
	a, err := st.Account(context.Background(), acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Balance != 20_000000 || a.Limits.TierRPM != 0 || a.Limits.SendRPM != 5 || a.Limits.StatusRPM != 2000 ||
		!a.RCSFallback || a.WAQualityTier != 2 || strings.Join(a.IPAllowlist, ",") != "10.0.0.0/8,::1" {
		t.Fatalf("account after commands: %+v", a)
	}
	if sum, _ := st.LedgerSum(context.Background(), acc.ID); sum != a.Balance {
		t.Fatalf("ledger %d, balance %d", sum, a.Balance)
	}
	// Bad input is refused with a message and changes nothing.
	for _, args := range [][]string{
		{"account", "create", "--db", db, "--name", "X", "--tier", "gold"},
		{"account", "settings", "--db", db, "--account", acc.ID, "--wa-tier", "9"},
		{"account", "settings", "--db", db, "--account", acc.ID, "--ip-allowlist", "nonsense"},
		{"key", "create", "--db", db, "--account", "acc_missing", "--env", "live"},
		{"credits", "add", "--db", db, "--account", acc.ID, "--amount", "-1000"},
		{"user", "create", "--db", db, "--account", acc.ID, "--email", "ops@acme.example", "--role", "owner"},
		{"nonsense"},
	} {
		if _, errs, code := runMain(t, args...); code == 0 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	if b, _ := st.Account(context.Background(), acc.ID); b.Balance != a.Balance || b.WAQualityTier != 2 {
		t.Fatalf("a refused command changed the account: %+v", b)
	}
}

func openTestStore(t *testing.T, db string) *store.Store {
	t.Helper()
	st, err := openStore(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
