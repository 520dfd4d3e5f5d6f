package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/app"
	"github.com/msgsvc/msgsvc/internal/nodetest"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

func TestBootstrapCommands(t *testing.T) {
	db := migrated(t, filepath.Join(t.TempDir(), "msgsvc.db"))
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
	if _, errs, code = runMain(t, "account", "settings", "--db", db, "--account", acc.ID, "--rcs-fallback=true", "--wa-tier", "2", "--ip-allowlist", "10.0.0.0/8,::1"); code != 0 {
		t.Fatalf("account settings: %s", errs)
	}
	out, errs, code = runMain(t, "user", "create", "--db", db, "--account", acc.ID, "--email", "Ops@Acme.example", "--role", "owner", "--json")
	if code != 0 || !strings.Contains(out, `"password"`) {
		t.Fatalf("user create: %s %s", out, errs)
	}
	st := nodetest.OpenStore(t, db)
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

// Every command and group answers -h with its flags and exit code 0, and
// mistakes say what to run next.
func TestHelpAndMistakes(t *testing.T) {
	for _, c := range adminCommands {
		args := append(strings.Fields(c.name), "-h")
		out, errs, code := runMain(t, args...)
		if code != 0 || !strings.Contains(out, "-db") || !strings.Contains(out, c.summary) {
			t.Errorf("%s -h: %d\n%s\n%s", c.name, code, out, errs)
		}
	}
	// The commands that are not operator commands, and the middle words of
	// longer ones.
	for _, args := range [][]string{{"dev"}, {"serve"}, {"migrate"}, {"backup"}, {"bench"}, {"version"}, {"send"}, {"listen"}, {"account", "secret"}} {
		out, errs, code := runMain(t, append(args, "-h")...)
		if code != 0 || !strings.HasPrefix(out, "msgsvc "+strings.Join(args, " ")) || errs != "" {
			t.Errorf("%v -h: %d\n%s\n%s", args, code, out, errs)
		}
	}
	for g := range adminGroups() {
		out, _, code := runMain(t, g, "-h")
		if code != 0 || !strings.Contains(out, "msgsvc "+g+" ") {
			t.Errorf("%s -h: %d %s", g, code, out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"acount"}, `run "msgsvc help"`},
		{[]string{"account", "destroy"}, `run "msgsvc account -h"`},
		{[]string{"key", "create"}, "--account is required: give the id that msgsvc account create printed"},
		{[]string{"account"}, "account needs a subcommand"},
	} {
		_, errs, code := runMain(t, c.args...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: %d %q, want %q", c.args, code, errs, c.want)
		}
	}
	if out, _, code := runMain(t, "help"); code != 0 || !strings.Contains(out, "msgsvc sender add") {
		t.Errorf("help: %d %s", code, out)
	}
}

func TestVersion(t *testing.T) {
	out, _, code := runMain(t, "version")
	if code != 0 || !strings.HasPrefix(out, "msgsvc "+app.Version) {
		t.Fatalf("version: %d %q", code, out)
	}
	out, _, code = runMain(t, "version", "--json")
	var v map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v["version"] != app.Version || v["go"] == "" {
		t.Fatalf("version --json: %d %q", code, out)
	}
}

func TestSenderAndKeyCommands(t *testing.T) {
	db, accountID, run := accountCommands(t)
	sd := run("sender", "add", "--channel", "sms", "--value", "Acme", "--default")
	if sd["channel"] != "SMS" || sd["default"] != true {
		t.Fatalf("sender add: %v", sd)
	}
	if _, errs, code := runMain(t, "sender", "add", "--db", db, "--account", accountID, "--value", "Acme"); code == 0 || !strings.Contains(errs, "already") {
		t.Fatalf("duplicate sender: %d %s", code, errs)
	}
	if _, errs, code := runMain(t, "sender", "add", "--db", db, "--account", accountID, "--value", "Way too long ID"); code == 0 || !strings.Contains(errs, "1 to 11") {
		t.Fatalf("bad sender: %d %s", code, errs)
	}
	if list := run("sender", "list")["senders"].([]any); len(list) != 1 {
		t.Fatalf("sender list: %v", list)
	}
	run("sender", "remove", "--id", sd["id"].(string))
	if list := run("sender", "list")["senders"].([]any); len(list) != 0 {
		t.Fatalf("sender list after remove: %v", list)
	}
	k := run("key", "create", "--env", "live")
	run("key", "revoke", "--id", k["id"].(string))
	keys := run("key", "list")["keys"].([]any)
	if len(keys) != 1 || keys[0].(map[string]any)["revokedAt"] == nil {
		t.Fatalf("key list: %v", keys)
	}
	if r := run("account", "secret", "rotate"); !strings.HasPrefix(r["secret"].(string), "whsec_") {
		t.Fatalf("secret rotate: %v", r)
	}
}

// msgsvc backup copies a SQLite database that is in use.
func TestBackupCommand(t *testing.T) {
	dir := t.TempDir()
	db, copyPath := migrated(t, filepath.Join(dir, "msgsvc.db")), filepath.Join(dir, "copy.db")
	out, errs, code := runMain(t, "account", "create", "--db", db, "--name", "Acme", "--json")
	if code != 0 {
		t.Fatalf("account create: %s", errs)
	}
	_ = nodetest.OpenStore(t, db) // the database stays open, as under a running node
	if _, errs, code = runMain(t, "backup", "--db", db, "--to", copyPath); code != 0 {
		t.Fatalf("backup: %d %s", code, errs)
	}
	accts, err := nodetest.OpenStore(t, copyPath).Accounts(context.Background())
	if err != nil || len(accts) != 1 || !strings.Contains(out, accts[0].ID) {
		t.Fatalf("the copy holds %v (%v)", accts, err)
	}
	if _, errs, code = runMain(t, "backup", "--db", db, "--to", copyPath); code == 0 || !strings.Contains(errs, "already exists") {
		t.Errorf("a second backup to the same file: %d %s", code, errs)
	}
}

// The systemd unit starts serve and names only settings serve knows.
func TestSystemdUnit(t *testing.T) {
	unit, err := os.ReadFile("../../deploy/msgsvc.service")
	if err != nil {
		t.Fatal(err)
	}
	help, _, code := runMain(t, "serve", "-h")
	if code != 0 {
		t.Fatal("serve -h failed")
	}
	if !strings.Contains(string(unit), "\nExecStart=/usr/local/bin/msgsvc serve\n") {
		t.Error("the unit does not start msgsvc serve")
	}
	for _, name := range regexp.MustCompile(`MSGSVC_[A-Z_]+`).FindAllString(string(unit), -1) {
		if !strings.Contains(help, "["+name+"]") {
			t.Errorf("the unit sets %s, which serve does not read", name)
		}
	}
}

// Operators are made by the command line only: no account, role operator,
// and they can log in to the management API.
func TestOperatorCommand(t *testing.T) {
	db := storetest.Migrated(t, "sqlite")
	out, errs, code := runMain(t, "user", "create", "--db", db, "--operator", "--email", "ops@msgsvc.example", "--json")
	var u map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &u) != nil {
		t.Fatalf("user create --operator: %d %s %s", code, out, errs)
	}
	if u["role"] != "operator" || u["accountId"] != nil || len(u["password"].(string)) < 20 {
		t.Fatalf("operator: %v", u)
	}
	out, _, _ = runMain(t, "account", "create", "--db", db, "--name", "Acme", "--json")
	var acc struct{ ID string }
	if err := json.Unmarshal([]byte(out), &acc); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := runMain(t, "user", "create", "--db", db, "--operator", "--account", acc.ID, "--email", "x@y.example"); code == 0 ||
		!strings.Contains(errs, "--operator") {
		t.Fatalf("an operator with an account: %d %s", code, errs)
	}
	if _, errs, code := runMain(t, "user", "create", "--db", db, "--account", acc.ID, "--email", "x@y.example", "--role", "boss"); code == 0 ||
		!strings.Contains(errs, "role must be") {
		t.Fatalf("an unknown role: %d %s", code, errs)
	}
	if _, errs, code := runMain(t, "user", "create", "--db", db, "--operator", "--email", "ops@msgsvc.example"); code == 0 ||
		!strings.Contains(errs, "email already has a user") {
		t.Fatalf("a taken email: %d %s", code, errs)
	}
	if out, errs, code := runMain(t, "credits", "add", "--db", db, "--account", acc.ID, "--amount", "5", "--note", "promo", "--json"); code != 0 ||
		!strings.Contains(out, `"balance": 5`) {
		t.Fatalf("credits add: %d %s %s", code, out, errs)
	}
}

// migrated makes the database at db with msgsvc migrate, as an operator
// does before the other commands (which never make one). The tests of
// other commands start from a copy of a migrated database instead
// (storetest.Migrated): migrating from nothing takes seconds under -race.
func migrated(t *testing.T, db string) string {
	t.Helper()
	if _, errs, code := runMain(t, "migrate", "--db", db); code != 0 {
		t.Fatalf("migrate: %d %s", code, errs)
	}
	return db
}

// accountCommands takes a migrated database and makes an account in it
// with account create, and returns a runner of commands on that
// account that decodes what they print with --json.
func accountCommands(t *testing.T) (db, account string, run func(args ...string) map[string]any) {
	t.Helper()
	db = storetest.Migrated(t, "sqlite")
	out, _, _ := runMain(t, "account", "create", "--db", db, "--name", "Acme", "--json")
	var acc struct{ ID string }
	if err := json.Unmarshal([]byte(out), &acc); err != nil {
		t.Fatal(err)
	}
	return db, acc.ID, func(args ...string) map[string]any {
		t.Helper()
		out, errs, code := runMain(t, append(args, "--db", db, "--account", acc.ID, "--json")...)
		if code != 0 {
			t.Fatalf("%v: %d %s", args, code, errs)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("%v printed %q", args, out)
		}
		return m
	}
}

// msgsvc smpp-user create|list|remove: the password printed once.
func TestSMPPUserCommands(t *testing.T) {
	db, accountID, run := accountCommands(t)
	u := run("smpp-user", "create", "--env", "live", "--system-id", "acme", "--max-binds", "2")
	if u["systemId"] != "acme" || len(u["password"].(string)) != 8 || !strings.HasPrefix(u["id"].(string), "smu_") {
		t.Fatalf("create: %v", u)
	}
	if _, errs, code := runMain(t, "smpp-user", "create", "--db", db, "--account", accountID, "--system-id", "acme"); code == 0 ||
		!strings.Contains(errs, "taken") {
		t.Fatalf("a taken system_id: %d %s", code, errs)
	}
	list := run("smpp-user", "list")["smppUsers"].([]any)
	if len(list) != 1 || strings.Contains(fmt.Sprint(list), u["password"].(string)) {
		t.Fatalf("list: %v", list)
	}
	run("smpp-user", "remove", "--id", u["id"].(string))
	if list := run("smpp-user", "list")["smppUsers"].([]any); len(list) != 0 {
		t.Fatalf("list after remove: %v", list)
	}
}

// msgsvc twilio-credentials create|list|remove: the auth token and the
// key's secret printed once, the SID removed given as the argument, and
// another account's SID out of reach.
func TestTwilioCredentialCommands(t *testing.T) {
	db, accountID, run := accountCommands(t)
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	ac := run("twilio-credentials", "create", "--env", "live")
	sid, _ := ac["accountSid"].(string)
	token, _ := ac["authToken"].(string)
	if len(ac) != 3 || !strings.HasPrefix(sid, "AC") || !hex32.MatchString(sid[2:]) || !hex32.MatchString(token) || ac["environment"] != "live" {
		t.Fatalf("create: %v", ac)
	}
	key := run("twilio-credentials", "create", "--api-key", "--parent", sid)
	skSid, _ := key["sid"].(string)
	if !strings.HasPrefix(skSid, "SK") || !hex32.MatchString(key["secret"].(string)) || key["accountSid"] != sid || key["environment"] != "live" {
		t.Fatalf("create an API key: %v", key)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"create"}, "--env is required"},
		{[]string{"create", "--env", "prod"}, "environment must be test or live"},
		{[]string{"create", "--api-key"}, "--api-key needs --parent"},
		{[]string{"create", "--env", "live", "--parent", sid}, "add --api-key"},
		{[]string{"create", "--api-key", "--parent", skSid}, "accountSid is not an account SID"},
		{[]string{"remove"}, "the SID is required"},
		{[]string{"remove", sid, skSid}, "takes one SID"},
	} {
		args := append([]string{"twilio-credentials"}, c.args...)
		if _, errs, code := runMain(t, append(args, "--db", db, "--account", accountID)...); code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: %d %q, want %q", c.args, code, errs, c.want)
		}
	}

	list := run("twilio-credentials", "list")["twilioCredentials"].([]any)
	if len(list) != 2 || strings.Contains(fmt.Sprint(list), token) || strings.Contains(fmt.Sprint(list), key["secret"].(string)) {
		t.Fatalf("list: %v", list)
	}
	if out, errs, code := runMain(t, "twilio-credentials", "list", "--db", db, "--account", accountID); code != 0 ||
		!strings.Contains(out, sid) || !strings.Contains(out, "key of "+sid) || strings.Contains(out, token) {
		t.Fatalf("list for people: %d %s %s", code, out, errs)
	}

	// Another account cannot remove ours, and sees none of them.
	out, _, _ := runMain(t, "account", "create", "--db", db, "--name", "Other", "--json")
	var other struct{ ID string }
	if err := json.Unmarshal([]byte(out), &other); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := runMain(t, "twilio-credentials", "remove", "--db", db, "--account", other.ID, sid); code == 0 ||
		!strings.Contains(errs, "no Twilio credential") {
		t.Fatalf("another account removing ours: %d %s", code, errs)
	}
	if out, _, code := runMain(t, "twilio-credentials", "list", "--db", db, "--account", other.ID, "--json"); code != 0 || strings.Contains(out, sid) {
		t.Fatalf("another account's list: %d %s", code, out)
	}

	// The SID before the flags, or after them.
	if r := run("twilio-credentials", "remove", skSid); r["removed"] != true {
		t.Fatalf("remove: %v", r)
	}
	if _, errs, code := runMain(t, "twilio-credentials", "remove", "--db", db, "--account", accountID, sid); code != 0 {
		t.Fatalf("remove: %d %s", code, errs)
	}
	if list := run("twilio-credentials", "list")["twilioCredentials"].([]any); len(list) != 0 {
		t.Fatalf("list after remove: %v", list)
	}
}
