package routing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An empty file, or one without routes, is refused: put in use it would
// leave every channel without a route (issue 35 items 7 and 14).
func TestEmptyOrRoutelessFileIsRefused(t *testing.T) {
	for name, text := range map[string]string{
		"empty":      "",
		"blank":      "\n\n",
		"no routes":  "providers:\n  - {name: a, type: smpp, smpp: {addr: 'h:1', systemId: s}}\n",
		"null lists": "providers:\nroutes:\n",
	} {
		_, err := Parse("msgsvc.yaml", []byte(text), env(nil), registry(t))
		if err == nil || !strings.Contains(err.Error(), "msgsvc.yaml: routes: the file has no routes") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Duplicate route names and weights that are all zero are refused, each
// naming the route (issue 35 item 9).
func TestRouteNamesAndWeights(t *testing.T) {
	const providers = "providers:\n  - {name: a, type: smpp, smpp: {addr: 'h:1', systemId: s}}\n" +
		"  - {name: b, type: smpp, smpp: {addr: 'h:2', systemId: s}}\n"
	for text, want := range map[string]string{
		"routes:\n  - {name: uk, channel: SMS, primary: a}\n  - {name: uk, channel: SMS, primary: b}\n":            `msgsvc.yaml:6: routes[1].name: route "uk" is named twice (also routes[0])`,
		"routes:\n  - {name: split, channel: SMS, providers: [a, b], strategy: weighted, weights: {a: 0, b: 0}}\n": `msgsvc.yaml:5: routes[0].weights: route "split" gives every provider a weight of 0`,
	} {
		_, err := Parse("msgsvc.yaml", []byte(providers+text), env(nil), registry(t))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
	ok := "routes:\n  - {name: split, channel: SMS, providers: [a, b], strategy: weighted, weights: {a: 0, b: 1}}\n" +
		"  - {channel: SMS, primary: a}\n  - {channel: SMS, primary: b}\n"
	if _, err := Parse("msgsvc.yaml", []byte(providers+ok), env(nil), registry(t)); err != nil {
		t.Fatalf("a zero weight among others, unnamed routes: %v", err)
	}
}

// Unknown account ids in a route are problems naming the route.
func TestCheckAccounts(t *testing.T) {
	c, err := Parse("msgsvc.yaml", []byte("providers:\n  - {name: a, type: smpp, smpp: {addr: 'h:1', systemId: s}}\n"+
		"routes:\n  - {name: vip, channel: SMS, primary: a, accounts: [acc_known, acc_typo]}\n"), env(nil), registry(t))
	if err != nil {
		t.Fatal(err)
	}
	err = c.CheckAccounts("msgsvc.yaml", func(id string) (bool, error) { return id == "acc_known", nil })
	if err == nil || err.Error() != `msgsvc.yaml:4: routes[0].accounts[1]: route "vip" no account has the id "acc_typo"` {
		t.Fatalf("unknown account: %v", err)
	}
}

// A problem never carries a file's raw bytes: a rate card pointed at a
// binary file is named, with what was quoted escaped and cut short.
func TestProblemsQuoteNoRawBytes(t *testing.T) {
	dir := t.TempDir()
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = byte(i*7919 + i/3)
	}
	if err := os.WriteFile(filepath.Join(dir, "rates.csv"), junk, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "msgsvc.yaml")
	if err := os.WriteFile(cfg, []byte("providers:\n  - {name: a, type: smpp, smpp: {addr: 'h:1', systemId: s}, costs: rates.csv}\n"+
		"routes:\n  - {channel: SMS, primary: a}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(cfg, env(nil), registry(t))
	if err == nil || !strings.Contains(err.Error(), "msgsvc.yaml:2: providers[0].costs: rates.csv") {
		t.Fatalf("binary rate card: %v", err)
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if len(line) > 400 {
			t.Errorf("a problem of %d bytes: %.80q…", len(line), line)
		}
		for _, r := range line {
			if r == 0xFFFD || (r < 0x20 && r != '\t') || r == 0x7f {
				t.Fatalf("raw bytes in %q", line)
			}
		}
	}
}

// config check runs where the secrets are not set: each unset ${NAME}
// is a warning naming it, and the rest of the file is still checked.
func TestCheckWithoutSecrets(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "msgsvc.yaml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("providers:\n  - name: a\n    type: smpp\n    smpp: {addr: 'h:1', systemId: s, password: '${CARRIER_PASSWORD}'}\n" +
		"routes:\n  - {channel: SMS, primary: a}\n")
	c, warnings, err := Check(path, env(nil), registry(t))
	if err != nil || len(c.Routes) != 1 || len(warnings) != 1 || !strings.Contains(warnings[0], "msgsvc.yaml:4: ${CARRIER_PASSWORD} is not set") {
		t.Fatalf("unset secret: %v %q", err, warnings)
	}
	if _, err := Load(path, env(nil), registry(t)); err == nil || !strings.Contains(err.Error(), "${CARRIER_PASSWORD} is not set") {
		t.Fatalf("Load (as serve) with the secret unset: %v", err)
	}
	write("providers:\n  - name: a\n    type: smpp\n    smpp: {addr: 'h:1', systemId: s, password: '${CARRIER_PASSWORD}'}\n" +
		"routes:\n  - {channel: SMS, primary: nobody}\n")
	if _, warnings, err := Check(path, env(nil), registry(t)); err == nil || !strings.Contains(err.Error(), `no provider is named "nobody"`) || len(warnings) != 1 {
		t.Fatalf("a wrong reference with a secret unset: %v %q", err, warnings)
	}
}
