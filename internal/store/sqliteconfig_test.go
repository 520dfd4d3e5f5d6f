//go:build !cgosqlite

package store

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteHandle is the sqlite3* behind a modernc driver connection. The
// driver does not export it; this reads its field, and fails the test
// loudly if a new version of the driver moved it.
func sqliteHandle(t *testing.T, dc any) uintptr {
	t.Helper()
	v := reflect.ValueOf(dc)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		t.Fatalf("driver connection is a %T, not a pointer to a struct", dc)
	}
	f := v.Elem().FieldByName("db")
	if !f.IsValid() || f.Kind() != reflect.Uintptr {
		t.Fatalf("driver connection %T has no db handle field: update sqliteHandle for this driver", dc)
	}
	return uintptr(f.Uint())
}

// dbStatus reads one of SQLite's per-connection counters: the current
// value and the highest since it was last reset (and resets it).
func dbStatus(db uintptr, op int32) (cur, hi int32) {
	tls := libc.NewTLS()
	defer tls.Close()
	p := libc.Xmalloc(tls, 8)
	defer libc.Xfree(tls, p)
	sqlite3.Xsqlite3_db_status(tls, db, op, p, p+4, 1)
	return *(*int32)(cptr(p)), *(*int32)(cptr(p + 4))
}

// TestWriterConnectionRunsWithoutItsMutexOnALargerLookaside checks that
// configureSQLite took: the writer's connection has the placeholder for a
// mutex (the driver asked for a full one), and after a run of grouped
// writes and reads with the statements kept, its lookaside pool never
// ran out, where the default pool was taken up by the kept statements and
// missed on nearly every allocation.
func TestWriterConnectionRunsWithoutItsMutexOnALargerLookaside(t *testing.T) {
	s := blobStore(t, filepath.Join(t.TempDir(), "x.db"))
	ctx := context.Background()
	if connMutexes.placeholder == 0 {
		t.Fatal("SQLite was initialized before the store configured it: the connection mutexes are the defaults")
	}
	if _, err := s.w.Exec(`CREATE TABLE rows (id TEXT PRIMARY KEY, account TEXT NOT NULL, body TEXT NOT NULL, n INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.Exec(`CREATE INDEX rows_account ON rows (account, n)`); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("a message of some length ", 16)
	for g := range 40 {
		err := s.Write(ctx, func(tx *Tx) error {
			for i := range 5 {
				n := g*5 + i
				if err := tx.execLater(ctx, `INSERT INTO rows (id, account, body, n) VALUES ($1, $2, $3, $4)`,
					fmt.Sprintf("row-%05d", n), fmt.Sprintf("acc-%d", n%3), body, n); err != nil {
					return err
				}
			}
			// Distinct statements, each kept prepared by the writer as its
			// own statements are, each holding some of the pool.
			for k := range 60 {
				var count int
				q := fmt.Sprintf(`SELECT count(*) FROM rows WHERE account = $1 AND n > %d`, k)
				if err := tx.queryRow(ctx, q, "acc-1").Scan(&count); err != nil {
					return err
				}
			}
			_, err := tx.exec(ctx, `UPDATE rows SET body = $2 WHERE id = $1`, fmt.Sprintf("row-%05d", g), body+"!")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.wr.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.wr.release()
	err := s.wr.conn.Raw(func(dc any) error {
		db := sqliteHandle(t, dc)
		tls := libc.NewTLS()
		defer tls.Close()
		if mu := sqlite3.Xsqlite3_db_mutex(tls, db); mu != connMutexes.placeholder {
			t.Errorf("the writer's connection mutex is %#x, want the placeholder %#x", mu, connMutexes.placeholder)
		}
		_, used := dbStatus(db, sqlite3.SQLITE_DBSTATUS_LOOKASIDE_USED)
		_, hits := dbStatus(db, sqlite3.SQLITE_DBSTATUS_LOOKASIDE_HIT)
		_, full := dbStatus(db, sqlite3.SQLITE_DBSTATUS_LOOKASIDE_MISS_FULL)
		t.Logf("lookaside: %d slots in use at most, %d hits, %d misses for want of a slot", used, hits, full)
		if hits == 0 || full != 0 {
			t.Errorf("lookaside served %d allocations and missed %d for want of a slot; want every one served", hits, full)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestConnectionsInManyGoroutines runs readers and the writer on the
// same file from many goroutines at once (under -race in CI): the
// connections' mutexes are placeholders, so this holds only because no
// connection is ever used by two goroutines at a time.
func TestConnectionsInManyGoroutines(t *testing.T) {
	s := blobStore(t, filepath.Join(t.TempDir(), "x.db"))
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 25 {
				n := w*100 + i
				if err := s.Write(ctx, func(tx *Tx) error {
					return tx.execLater(ctx, `INSERT INTO blobs (n, b) VALUES ($1, $2)`, n, []byte(fmt.Sprint(n)))
				}); err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 25 {
				var c int
				if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM blobs`).Scan(&c); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var c int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM blobs`).Scan(&c); err != nil {
		t.Fatal(err)
	}
	if c != 8*25 {
		t.Fatalf("%d rows, want %d", c, 8*25)
	}
}
