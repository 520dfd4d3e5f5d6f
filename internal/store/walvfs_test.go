//go:build !cgosqlite

package store

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// walWrites counts the writes made so far to the log of the database at
// path, by every connection of this process, and the times a commit was
// about to be published with frames still buffered.
func walWrites(path string) (writes, late int) {
	theWAL.mu.RLock()
	defer theWAL.mu.RUnlock()
	for _, l := range theWAL.logs {
		if l.path == path+"-wal" {
			writes += l.writes
			late += l.late
		}
	}
	return writes, late
}

// blobStore opens a store at path with a table of numbered blobs, closed
// when the test ends.
func blobStore(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), "sqlite:"+path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.w.Exec(`CREATE TABLE blobs (n INTEGER PRIMARY KEY, b BLOB NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return s
}

// copyFile copies src to dst as the file is now.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWALCommitsReachTheFile: every committed transaction is in the log
// file when its commit returns, whatever its size (one page, a few dozen,
// more than one write can take, more than the buffer holds), so that a
// copy of the files taken then (what a crash of the process leaves) holds
// it; and a transaction that fits in one write is written with one.
func TestWALCommitsReachTheFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "msgsvc.db")
	s := blobStore(t, path)
	want := map[int][]byte{}
	for i, tc := range []struct {
		rows, size int
	}{{1, 10}, {40, 1000}, {1, 200 << 10}, {300, 10 << 10}, {1, 10}} {
		before, _ := walWrites(path)
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < tc.rows; r++ {
			n := i*1000 + r
			b := bytes.Repeat([]byte{byte(n)}, tc.size)
			if _, err := tx.ExecContext(ctx, `INSERT INTO blobs (n, b) VALUES ($1, $2)`, n, b); err != nil {
				t.Fatal(err)
			}
			want[n] = b
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		after, late := walWrites(path)
		if late > 0 {
			t.Errorf("transaction %d: its commit frame did not write the log out; the barrier before publishing it did", i)
		}
		if tc.rows*tc.size < 8<<10 {
			// The log may have been checkpointed and restarted since the
			// previous commit; then its header is written with a sync,
			// a write of its own.
			if got := after - before; got < 1 || got > 2 {
				t.Errorf("transaction %d (%d rows of %d bytes): %d writes to the log, want one", i, tc.rows, tc.size, got)
			}
		}

		crash := filepath.Join(dir, fmt.Sprintf("crash%d", i))
		if err := os.Mkdir(crash, 0o700); err != nil {
			t.Fatal(err)
		}
		copyFile(t, path, filepath.Join(crash, "msgsvc.db"))
		copyFile(t, path+"-wal", filepath.Join(crash, "msgsvc.db-wal"))
		// Read with SQLite's own VFS: recovery rebuilds the index from the
		// log alone, and keeps only whole transactions.
		db, err := sql.Open(sqliteDriver, "file:"+filepath.Join(crash, "msgsvc.db"))
		if err != nil {
			t.Fatal(err)
		}
		got := map[int][]byte{}
		rows, err := db.QueryContext(ctx, `SELECT n, b FROM blobs`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var n int
			var b []byte
			if err := rows.Scan(&n, &b); err != nil {
				t.Fatal(err)
			}
			got[n] = b
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if len(got) != len(want) {
			t.Fatalf("after transaction %d a copy of the files holds %d rows, want %d", i, len(got), len(want))
		}
		for n, b := range want {
			if !bytes.Equal(got[n], b) {
				t.Fatalf("after transaction %d row %d differs in the copy", i, n)
			}
		}
	}
}
