//go:build !cgosqlite && linux

package store

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWALWriteFailureFailsTheCommit: when the one write of a transaction's
// gathered frames fails (here the file may not grow: the limit on a file's
// size, with SIGXFSZ ignored, as a full disk would), the commit returns the
// error, nothing of the transaction is seen, and the next commit works.
// The limit is the whole process's, so the test runs in a child process of
// its own.
func TestWALWriteFailureFailsTheCommit(t *testing.T) {
	if dir := os.Getenv("MSGSVC_WAL_FAILURE_DIR"); dir != "" {
		walFailureChild(t, dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWALWriteFailureFailsTheCommit$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "MSGSVC_WAL_FAILURE_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestWALWriteFailureFailsTheCommit")) {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func walFailureChild(t *testing.T, dir string) {
	ctx := context.Background()
	path := filepath.Join(dir, "msgsvc.db")
	s := blobStore(t, path)
	if _, err := s.w.ExecContext(ctx, `INSERT INTO blobs (n, b) VALUES (1, x'01')`); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &was); err != nil {
		t.Fatal(err)
	}
	signal.Ignore(syscall.SIGXFSZ)
	limited := was
	limited.Cur = uint64(st.Size()) + 16<<10 // room for a few frames, not for 100 KiB
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limited); err != nil {
		t.Fatal(err)
	}
	_, err = s.w.ExecContext(ctx, `INSERT INTO blobs (n, b) VALUES (2, $1)`, bytes.Repeat([]byte{2}, 100<<10))
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &was); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil {
		t.Fatal("a commit whose log could not be written succeeded")
	}
	t.Logf("the commit failed as it should: %v", err)
	var n int
	if err := s.w.QueryRowContext(ctx, `SELECT COUNT(*) FROM blobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d rows after the failed commit, want 1", n)
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO blobs (n, b) VALUES (3, $1)`, bytes.Repeat([]byte{3}, 100<<10)); err != nil {
		t.Fatalf("the next commit: %v", err)
	}
	if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM blobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("%d rows seen by a reader, want 2", n)
	}
	if _, late := walWrites(path); late > 0 {
		t.Fatalf("a commit was about to be published with frames still buffered (%d times)", late)
	}
}
