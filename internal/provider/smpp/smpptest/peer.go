package smpptest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Peer is a running instance of the independent SMSC simulator
// (shared/peers/smsc-sim, built on node-smpp), started by its own script.
type Peer struct {
	Addr    string
	Log     string // the simulator's log file
	Process *os.Process
}

// StartPeer runs the simulator whose sources are in simDir on a free port
// of 127.0.0.1, with env added to its environment (FAIL_PERMILLE=1000,
// DLR_DELAY_MS=…), and kills it when t ends. The script is found relative
// to the calling test's package, which must sit two levels under the
// module's root (internal/app, internal/e2e).
func StartPeer(t testing.TB, simDir string, env ...string) *Peer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	script, err := filepath.Abs("../provider/smpp/testdata/run-peer.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script)
	cmd.Env = append(append(os.Environ(), "SMSC_SIM_DIR="+simDir, fmt.Sprintf("SMSC_PORT=%d", port)), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("start the SMSC simulator: %v\n%s", err, stderr.String())
	}
	var pid int
	if _, err := fmt.Sscan(strings.TrimSpace(string(out)), &pid); err != nil {
		t.Fatalf("simulator pid %q: %v", out, err)
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`log (\S+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no simulator log in %q", stderr.String())
	}
	t.Cleanup(func() { _ = proc.Kill() })
	return &Peer{Addr: fmt.Sprintf("127.0.0.1:%d", port), Log: m[1], Process: proc}
}
