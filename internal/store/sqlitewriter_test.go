package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
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

// TestWriterArgumentsAsDatabaseSQLPasses: the writer's statements, run on
// the driver's connection with their arguments converted by the writer,
// store what the same statement run through database/sql stores, for
// every kind of argument the store passes (and a few it might), in the
// order the query's $N name them.
func TestWriterArgumentsAsDatabaseSQLPasses(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "msgsvc.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const cols = 17
	if _, err := s.wexec(ctx, `CREATE TABLE kinds (k TEXT PRIMARY KEY, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17)`); err != nil {
		t.Fatal(err)
	}
	type word string
	str := "pointed"
	args := []any{"text", 42, int64(-7), 3.5, true, []byte{0, 1, 2}, nil, sql.NullString{}, sql.NullString{String: "x", Valid: true},
		sql.NullInt64{Int64: 5, Valid: true}, domain.Sent, word("w"), &str, (*string)(nil), uint8(9),
		time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), int32(-3)}
	// The query names its arguments out of order, and one twice.
	query := `INSERT INTO kinds VALUES ($18, $2, $1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $2)`
	if err := s.Write(ctx, func(tx *Tx) error {
		_, err := tx.exec(ctx, query, append(append([]any{}, args...), "writer")...)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ref, err := sql.Open(sqliteDriver, "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	// The same statement as the store rewrites it for SQLite ("?" in
	// order, the arguments put in that order), through database/sql.
	r := rewrite(query)
	if _, err := ref.ExecContext(ctx, r.sql, r.args(append(append([]any{}, args...), "database/sql"))...); err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	sel := "SELECT k"
	for c := 1; c <= cols; c++ {
		sel += fmt.Sprintf(", typeof(c%d) || ':' || quote(c%d)", c, c)
	}
	rs, err := ref.QueryContext(ctx, sel+" FROM kinds")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	for rs.Next() {
		vals := make([]string, cols+1)
		dest := make([]any, cols+1)
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rs.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		rows[vals[0]] = vals[1:]
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	w, d := rows["writer"], rows["database/sql"]
	if len(w) != cols || len(d) != cols {
		t.Fatalf("rows: %v", rows)
	}
	for c := range cols {
		if w[c] != d[c] {
			t.Errorf("column c%d: the writer stored %s, database/sql %s", c+1, w[c], d[c])
		}
	}
	if w[0] != "integer:42" || w[1] != "text:'text'" || w[16] != "integer:42" || w[6] != "null:NULL" {
		t.Errorf("the arguments went to the wrong places: %v", w)
	}
}

// TestWriterRefusesAnArgumentItCannotConvert: an argument the driver
// cannot take fails its statement, and the transaction's other writes
// with it.
func TestWriterRefusesAnArgumentItCannotConvert(t *testing.T) {
	s := numbersStore(t)
	ctx := context.Background()
	err := s.Write(ctx, func(tx *Tx) error {
		if _, err := tx.exec(ctx, `INSERT INTO numbers (n) VALUES ($1)`, 1); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `INSERT INTO numbers (n) VALUES ($1)`, struct{ n int }{2})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "converting argument $1") {
		t.Fatalf("err = %v, want the argument refused", err)
	}
	if n := countNumbers(t, s); n != 0 {
		t.Fatalf("%d rows, want none", n)
	}
}
