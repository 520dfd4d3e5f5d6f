//go:build linux

package app

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/polltest"
)

// TestFullDiskAnswers503: when the store cannot write (here its files may
// not grow: the limit on a file's size, with SIGXFSZ ignored, as a full
// disk would), a send answers 503 SERVICE_UNAVAILABLE with Retry-After,
// not 500, and /readyz answers 503 until a write succeeds again, though
// reads still work (issue 35 item 13). The limit is the whole process's,
// so the test runs in a child process of its own. PostgreSQL's side (a
// full disk, a lost connection) is the same classification, unit-tested
// in internal/store.
func TestFullDiskAnswers503(t *testing.T) {
	if os.Getenv("MSGSVC_FULL_DISK_CHILD") != "" {
		fullDiskChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFullDiskAnswers503$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "MSGSVC_FULL_DISK_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestFullDiskAnswers503")) {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func fullDiskChild(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	body := map[string]any{"to": "46700000031", "message": strings.Repeat("full disk ", 60), "type": "SMS"}
	if r := e.do("POST", "/api/v1/integration/messages", e.testKey, body); r.status != http.StatusAccepted {
		t.Fatalf("a send before the disk filled: %d %s", r.status, r.body)
	}
	db, _ := sqlitePath(e.srv.cfg.DB)
	var size int64
	for _, f := range []string{db, db + "-wal"} {
		if st, err := os.Stat(f); err == nil {
			size = max(size, st.Size())
		}
	}
	if entries, err := os.ReadDir(filepath.Dir(db)); err == nil {
		for _, en := range entries {
			if info, err := en.Info(); err == nil {
				size = max(size, info.Size())
			}
		}
	}
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &was); err != nil {
		t.Fatal(err)
	}
	signal.Ignore(syscall.SIGXFSZ)
	limited := was
	limited.Cur = uint64(size) + 64<<10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limited); err != nil {
		t.Fatal(err)
	}
	restored := false
	restore := func() {
		if !restored {
			restored = true
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &was); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer restore()
	// Every send answers 202 or 503, never 500. Messages accepted before
	// keep the simulator writing in the background, and a small write may
	// still fit (the log is reused after a checkpoint) and clear the
	// failure, so the 503 of /readyz is looked for right after a refused
	// send, a bounded number of times.
	var refused response
	sawReady503 := false
	for i := 0; i < 2000 && !sawReady503; i++ {
		r := e.do("POST", "/api/v1/integration/messages", e.testKey, body)
		if r.status == http.StatusAccepted {
			continue
		}
		wantProblem(t, "a send on a full disk", r, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
		if r.header.Get("Retry-After") == "" {
			t.Fatalf("503 without Retry-After: %v", r.header)
		}
		refused = r
		ready := e.do("GET", "/readyz", "", nil)
		if ready.status == http.StatusServiceUnavailable {
			if body := ready.json(t); body["storage"] != "unavailable" || ready.header.Get("Retry-After") == "" {
				t.Fatalf("/readyz on a full disk: %d %s", ready.status, ready.body)
			}
			sawReady503 = true
		}
	}
	if refused.status == 0 {
		t.Fatal("2,000 sends were accepted with the files unable to grow")
	}
	if !sawReady503 {
		t.Fatal("/readyz never answered 503 right after a send refused for a full disk")
	}
	if r := e.do("GET", "/api/v1/integration/balance", e.testKey, nil); r.status != http.StatusOK {
		t.Fatalf("a read on a full disk: %d %s", r.status, r.body)
	}
	t.Logf("refused as it should: %s", refused.body)

	restore()
	if r := e.do("POST", "/api/v1/integration/messages", e.testKey, body); r.status != http.StatusAccepted {
		t.Fatalf("a send once there was room again: %d %s", r.status, r.body)
	}
	// A write that was under way when the limit went may still fail once
	// after the send: readiness follows the last write, so it is polled.
	var ready response
	polltest.For(t, "/readyz ready once there was room again", 10*time.Second, func() bool {
		ready = e.do("GET", "/readyz", "", nil)
		return ready.status == http.StatusOK
	})
	if body := ready.json(t); body["storage"] != "ok" {
		t.Fatalf("/readyz once there was room again: %d %s", ready.status, ready.body)
	}
}
