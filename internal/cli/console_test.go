package cli

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// msgsvc account statement and msgsvc export: a new account's credits are
// its month's top-up and closing balance, in text, JSON and CSV; its
// ledger exports as CSV with its header; messages need an account or
// --all.
func TestStatementAndExportCommands(t *testing.T) {
	db := storetest.Migrated(t, "sqlite")
	out, _, _ := runMain(t, "account", "create", "--db", db, "--name", "Acme", "--credits", "25", "--json")
	var acc struct{ ID string }
	if err := json.Unmarshal([]byte(out), &acc); err != nil {
		t.Fatal(err)
	}
	month := time.Now().UTC().Format("2006-01")
	out, errs, code := runMain(t, "account", "statement", "--account", acc.ID, "--db", db, "--json")
	var st map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st["month"] != month || st["topUps"] != 25.0 || st["closing"] != 25.0 || st["opening"] != 0.0 {
		t.Fatalf("statement: %d %s %s", code, out, errs)
	}
	if out, _, code = runMain(t, "account", "statement", "--account", acc.ID, "--db", db); code != 0 || !strings.Contains(out, "closing") || !strings.Contains(out, "25") {
		t.Fatalf("statement as text: %d %s", code, out)
	}
	out, _, code = runMain(t, "account", "statement", "--account", acc.ID, "--month", month, "--csv", "--db", db)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(rows) != 6 || rows[5][3] != "closing" || rows[5][8] != "25" {
		t.Fatalf("statement as CSV: %d %v %q", code, err, out)
	}
	if _, errs, code := runMain(t, "account", "statement", "--account", acc.ID, "--month", "2026-13", "--db", db); code == 0 || !strings.Contains(errs, "month") {
		t.Fatalf("a bad month: %d %s", code, errs)
	}

	out, errs, code = runMain(t, "export", "ledger", "--account", acc.ID, "--db", db)
	if code != 0 || !strings.HasPrefix(out, "id,createdAt,kind,amount,balanceAfter,messageId,campaignId,counterparty,note\n") || !strings.Contains(out, ",topup,25,25,") {
		t.Fatalf("export ledger: %d %s %s", code, out, errs)
	}
	if out, errs, code = runMain(t, "export", "messages", "--all", "--db", db); code != 0 || out != "id,accountId,createdAt,to,from,channel,type,status,segments,credits,errorCode,environment,campaignId,reference\n" {
		t.Fatalf("export of no messages: %d %q %s", code, out, errs)
	}
	for _, args := range [][]string{{"export", "messages"}, {"export", "ledger", "--all"}, {"export", "usage"}, {"export", "nothing"}} {
		if _, errs, code := runMain(t, append(args, "--db", db)...); code == 0 || errs == "" {
			t.Errorf("%v: %d %s", args, code, errs)
		}
	}
}
