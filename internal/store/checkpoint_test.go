//go:build !cgosqlite

package store

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestCheckpointsRunBesideTheWriter: the writer's connection does not
// checkpoint the log, and what its commits wrote still reaches the
// database file (which in WAL mode only a checkpoint writes), copied by
// the checkpointer's own connection.
func TestCheckpointsRunBesideTheWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "msgsvc.db")
	s := blobStore(t, path)
	var auto int
	if err := s.w.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil {
		t.Fatal(err)
	}
	if auto != 0 {
		t.Fatalf("the writer checkpoints every %d pages itself", auto)
	}
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	for i := 0; i < 40; i++ {
		err := s.Write(ctx, func(tx *Tx) error {
			for r := 0; r < 10; r++ {
				if _, err := tx.exec(ctx, `INSERT INTO blobs (n, b) VALUES ($1, $2)`, i*10+r, bytes.Repeat([]byte{byte(r)}, 10<<10)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for size() < before+3<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("the database file grew from %d to %d bytes only: the log was not checkpointed", before, size())
		}
		runtime.Gosched()
	}
}
