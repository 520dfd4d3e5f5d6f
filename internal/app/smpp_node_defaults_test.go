package app

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// node-smpp (npm smpp 0.5.1), left at its defaults, as the customer's
// ESME: it gives no data_coding, so it sends 1 (with GSM 03.38 septets), 3
// and 8 by the text. Every submit is accepted with a msg_ id, every
// receipt comes back, and every stored text is the one the script sent.
// CI installs the package into a folder and names it in
// MSGSVC_TEST_NODE_SMPP_DIR.
func TestSMPPServerPeerNodeSMPPDefaults(t *testing.T) {
	dir := os.Getenv("MSGSVC_TEST_NODE_SMPP_DIR")
	if dir == "" {
		t.Skip("set MSGSVC_TEST_NODE_SMPP_DIR to a folder where `npm install smpp@0.5.1` was run (node needed)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	modules := filepath.Join(dir, "node_modules")
	b, err := os.ReadFile(filepath.Join(modules, "smpp", "package.json"))
	if err != nil {
		t.Skipf("the npm package smpp is not installed in %s: %v", dir, err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(b, &pkg); err != nil || pkg.Version != "0.5.1" {
		t.Fatalf("smpp in %s is version %q (%v), want 0.5.1", dir, pkg.Version, err)
	}
	script, err := filepath.Abs("../smppserver/testdata/node-esme-defaults.js")
	if err != nil {
		t.Fatal(err)
	}
	e := smppEnv(t, "sqlite")
	sys, pw := e.smppUser(e.account.ID, "test", "nodedefaults")
	host, port, _ := net.SplitHostPort(e.srv.SMPPAddr())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, "40", "10")
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "SMPP_HOST="+host, "SMPP_PORT="+port, "SMPP_SYSTEM_ID="+sys,
		"SMPP_PASSWORD="+pw)
	out, err := cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || !strings.HasPrefix(lines[len(lines)-1], "OK:") {
		t.Fatalf("node-smpp ESME at its defaults: %v\n%s", err, out)
	}
	checked := 0
	for _, l := range lines {
		id, text, ok := strings.Cut(strings.TrimPrefix(l, "MSG "), " ")
		if !strings.HasPrefix(l, "MSG ") || !ok {
			continue
		}
		var want string
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatalf("script line %q: %v", l, err)
		}
		m, err := e.st.MessageByID(context.Background(), id)
		if err != nil || m.Body != want || m.Segments != 1 {
			t.Fatalf("message %s: body %q in %d segments (%v), the ESME sent %q", id, m.Body, m.Segments, err, want)
		}
		checked++
	}
	if checked != 40 {
		t.Fatalf("%d messages checked, want 40", checked)
	}
	t.Log(lines[len(lines)-1])
}
