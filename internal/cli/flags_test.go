package cli

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// everyCommand lists each command as its words, for -h.
func everyCommand() [][]string {
	out := [][]string{{"dev"}, {"serve"}, {"migrate"}, {"backup"}, {"bench"}, {"version"}, {"send"}, {"listen"}, {"usage"},
		{"config", "check"}}
	for _, c := range adminCommands {
		out = append(out, strings.Fields(c.name))
	}
	return out
}

// typedFlag is a flag line of -h that takes a value: "  -name type".
var typedFlag = regexp.MustCompile(`(?m)^  -([a-z0-9-]+) ([a-z0-9.]+)\n((?:    \t.*\n?)*)`)

// Every yes/no flag of every command is a switch: written bare it is
// true, and =true, =false and its MSGSVC_* variable work too (issue 36
// item 8). A flag whose -h names a type but whose default or help says
// true or false is a switch written as a string, which wants an argument.
func TestEveryBooleanFlagIsASwitch(t *testing.T) {
	for _, args := range everyCommand() {
		out, errs, code := runMain(t, append(append([]string{}, args...), "-h")...)
		if code != 0 {
			t.Fatalf("%v -h: %d %s %s", args, code, out, errs)
		}
		for _, m := range typedFlag.FindAllStringSubmatch(out, -1) {
			help := m[3]
			if strings.Contains(help, `(default "true")`) || strings.Contains(help, `(default "false")`) || strings.Contains(help, "true or false") {
				t.Errorf("%v: --%s is a yes/no flag that takes a %s argument:\n%s", args, m[1], m[2], m[0])
			}
		}
	}
	// serve's switches, bare, with a value and from the environment.
	switches := map[string]func(config.Config) bool{
		"webhook-allow-private": func(c config.Config) bool { return c.WebhookAllowPrivate },
		"media-url-probe":       func(c config.Config) bool { return c.MediaURLProbe },
		"simulator-journal":     func(c config.Config) bool { return c.SimJournal },
	}
	dir := t.TempDir()
	for name, get := range switches {
		env := "MSGSVC_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		for _, c := range []struct {
			env  string
			args []string
			want bool
		}{
			{"", []string{"--" + name}, true},
			{"", []string{"--" + name + "=true"}, true},
			{"", []string{"--" + name + "=false"}, false},
			{"true", nil, true},
			{"false", nil, false},
			{"true", []string{"--" + name + "=false"}, false},
			{"false", []string{"--" + name}, true},
		} {
			if c.env != "" {
				t.Setenv(env, c.env)
			} else {
				t.Setenv(env, "")
				os.Unsetenv(env)
			}
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			load := config.Flags(fs, false)
			args := append([]string{"--data", dir, "--redaction-key", "MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="}, c.args...)
			if err := fs.Parse(append(args, "--addr", "127.0.0.1:0")); err != nil {
				t.Fatalf("%s=%q %v: %v", env, c.env, c.args, err)
			}
			cfg, err := load()
			if err != nil {
				t.Fatalf("%s=%q %v: %v", env, c.env, c.args, err)
			}
			if get(cfg) != c.want {
				t.Errorf("%s=%q %v: %v, want %v", env, c.env, c.args, get(cfg), c.want)
			}
		}
	}
	_, errs, code := runMain(t, "account", "settings", "--account", "acc_x", "--rcs-fallback=maybe")
	if code == 0 || !strings.Contains(errs, `"maybe" is not true or false`) {
		t.Errorf("--rcs-fallback=maybe: %d %s", code, errs)
	}
}

// The operator commands work on the node's database and never make one:
// run from another folder, they say that no database is there and how to
// name it, and leave nothing behind. Only dev, serve and migrate create
// one; --data names it as serve's --data does (issue 36 item 7).
func TestCommandsNeverCreateADatabase(t *testing.T) {
	for _, v := range []string{"MSGSVC_DB", "MSGSVC_DATA"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	for _, args := range [][]string{
		{"sender", "list", "--account", "acc_01JD8Z5Q1J3L5N7Q9S1U3W5Y7A"},
		{"account", "create", "--name", "Acme"},
		{"backup", "--to", filepath.Join(elsewhere, "copy.db")},
		{"key", "list", "--account", "acc_x", "--db", filepath.Join(elsewhere, "other", "msgsvc.db")},
		{"config", "check", "--db", filepath.Join(elsewhere, "msgsvc.db"), "msgsvc.yaml"},
	} {
		if args[0] == "config" {
			if err := os.WriteFile("msgsvc.yaml", []byte("providers:\n  - {name: a, type: smpp, smpp: {addr: 'h:1', systemId: s}}\nroutes:\n  - {channel: SMS, primary: a}\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		_, errs, code := runMain(t, args...)
		if code == 0 || !strings.Contains(errs, "no database at") || !strings.Contains(errs, "--db") || !strings.Contains(errs, "MSGSVC_DB") {
			t.Errorf("%v: %d %q", args, code, errs)
		}
		for _, left := range []string{"msgsvc-data", "other", "msgsvc.db"} {
			if _, err := os.Stat(filepath.Join(elsewhere, left)); err == nil {
				t.Fatalf("%v left %s behind", args, left)
			}
		}
	}
	os.Remove("msgsvc.yaml")

	data := filepath.Join(elsewhere, "node")
	if _, errs, code := runMain(t, "migrate", "--data", data); code != 0 {
		t.Fatalf("migrate --data: %d %s", code, errs)
	}
	if out, errs, code := runMain(t, "account", "create", "--name", "Acme", "--data", data); code != 0 || !strings.Contains(out, "acc_") {
		t.Fatalf("account create --data after migrate: %d %s %s", code, out, errs)
	}
	t.Setenv("MSGSVC_DATA", data)
	if out, errs, code := runMain(t, "account", "create", "--name", "Beta"); code != 0 || !strings.Contains(out, "acc_") {
		t.Fatalf("account create with MSGSVC_DATA: %d %s %s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "msgsvc-data")); err == nil {
		t.Fatal("a database was made in the working folder")
	}
}

// A switch followed by a separate value is refused rather than read as
// "on" with the value dropped: "--rcs-fallback false" must not turn it on.
func TestSwitchWithASeparateValueIsRefused(t *testing.T) {
	db := storetest.Migrated(t, "sqlite")
	_, errs, code := runMain(t, "account", "settings", "--db", db, "--account", "acc_x", "--rcs-fallback", "false")
	if code == 0 || !strings.Contains(errs, `unexpected argument "false" after --rcs-fallback`) || !strings.Contains(errs, "--rcs-fallback=false") {
		t.Fatalf("--rcs-fallback false: %d %s", code, errs)
	}
	_, errs, code = runMain(t, "serve", "--webhook-allow-private", "false")
	if code == 0 || !strings.Contains(errs, `unexpected argument "false"`) {
		t.Fatalf("serve --webhook-allow-private false: %d %s", code, errs)
	}
}

// config check runs without the secrets (listing those unset, exit 0),
// refuses a file without routes, and checks the accounts routes name
// against --db (issue 35 items 7 and 9, issue 36 item 9).
func TestConfigCheckSecretsRoutesAndAccounts(t *testing.T) {
	t.Setenv("CHECK_TEST_PASSWORD", "")
	os.Unsetenv("CHECK_TEST_PASSWORD")
	dir := t.TempDir()
	file := filepath.Join(dir, "msgsvc.yaml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	provider := "providers:\n  - name: a\n    type: smpp\n    smpp: {addr: 'h:1', systemId: s, password: '${CHECK_TEST_PASSWORD}'}\n"
	write(provider + "routes:\n  - {channel: SMS, primary: a}\n")
	out, errs, code := runMain(t, "config", "check", file)
	if code != 0 || !strings.Contains(errs, "warning: "+file+":4: ${CHECK_TEST_PASSWORD} is not set here") ||
		!strings.Contains(out, "1 secrets not set here") || !strings.Contains(out, "accounts not checked (no --db)") {
		t.Fatalf("unset secret: %d %q %q", code, out, errs)
	}
	write("")
	if _, errs, code := runMain(t, "config", "check", file); code != 1 || !strings.Contains(errs, "the file has no routes") {
		t.Fatalf("empty file: %d %q", code, errs)
	}
	db := storetest.Migrated(t, "sqlite")
	acc, errs, code := runMain(t, "account", "create", "--db", db, "--name", "Acme")
	if code != 0 {
		t.Fatalf("account create: %s", errs)
	}
	id := regexp.MustCompile(`acc_[0-9a-z]+`).FindString(acc)
	write(provider + "routes:\n  - {channel: SMS, primary: a}\n  - {name: vip, channel: SMS, primary: a, accounts: [" + id + ", acc_typo]}\n")
	if _, errs, code := runMain(t, "config", "check", "--db", db, file); code != 1 || !strings.Contains(errs, `route "vip" no account has the id "acc_typo"`) {
		t.Fatalf("unknown account: %d %q", code, errs)
	}
	write(provider + "routes:\n  - {channel: SMS, primary: a}\n  - {name: vip, channel: SMS, primary: a, accounts: [" + id + "]}\n")
	if out, errs, code := runMain(t, "config", "check", file, "--db", db); code != 0 || !strings.Contains(out, "accounts checked") {
		t.Fatalf("known account: %d %q %q", code, out, errs)
	}
}
