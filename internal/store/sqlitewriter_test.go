package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"path/filepath"
	"testing"
)

// numbersStore opens a SQLite store with a table of numbers, closed when
// the test ends.
func numbersStore(t *testing.T) *Store {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "msgsvc.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.wexec(ctx, `CREATE TABLE numbers (n INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return s
}

func insertNumber(ctx context.Context, s *Store, n int) error {
	return s.Write(ctx, func(tx *Tx) error {
		_, err := tx.exec(ctx, `INSERT INTO numbers (n) VALUES ($1)`, n)
		return err
	})
}

func countNumbers(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.rqueryRow(context.Background(), `SELECT COUNT(*) FROM numbers`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// loseWriterConnection closes the writer's connection under it, as a
// driver that found its connection broken does.
func loseWriterConnection(t *testing.T, s *Store) {
	t.Helper()
	if err := s.wr.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.wr.release()
	if err := s.wr.conn.Raw(func(any) error { return driver.ErrBadConn }); !errors.Is(err, driver.ErrBadConn) {
		t.Fatalf("raw: %v", err)
	}
}

// TestWriterReplacesALostConnection: the writer holds its connection; if
// it is lost, the next transaction and the next single write run on a
// fresh one instead of failing.
func TestWriterReplacesALostConnection(t *testing.T) {
	ctx := context.Background()
	s := numbersStore(t)
	if err := insertNumber(ctx, s, 1); err != nil {
		t.Fatal(err)
	}
	loseWriterConnection(t, s)
	if err := insertNumber(ctx, s, 2); err != nil {
		t.Fatalf("write after the connection was lost: %v", err)
	}
	loseWriterConnection(t, s)
	if _, err := s.wexec(ctx, `INSERT INTO numbers (n) VALUES ($1)`, 3); err != nil {
		t.Fatalf("single write after the connection was lost: %v", err)
	}
	if n := countNumbers(t, s); n != 3 {
		t.Fatalf("%d numbers stored, want 3", n)
	}
}

// TestFailedWriteEndsItsTransaction: a write that fails leaves nothing of
// itself and no transaction open on the writer's connection, so another
// connection can take the write lock at once.
func TestFailedWriteEndsItsTransaction(t *testing.T) {
	ctx := context.Background()
	s := numbersStore(t)
	boom := errors.New("boom")
	err := s.Write(ctx, func(tx *Tx) error {
		if _, err := tx.exec(ctx, `INSERT INTO numbers (n) VALUES ($1)`, 1); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("write: %v, want boom", err)
	}
	if n := countNumbers(t, s); n != 0 {
		t.Fatalf("%d numbers stored by a failed write", n)
	}
	// The writer pool's other connection: BEGIN IMMEDIATE fails busy (after
	// the busy timeout) while the writer's connection holds a transaction.
	conn, err := s.w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatalf("the write lock is still held: %v", err)
	}
	if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	if err := insertNumber(ctx, s, 2); err != nil {
		t.Fatal(err)
	}
	if n := countNumbers(t, s); n != 1 {
		t.Fatalf("%d numbers stored, want 1", n)
	}
}
