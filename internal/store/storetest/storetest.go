// Package storetest opens fresh stores for tests: a temporary SQLite file,
// and, when MSGSVC_TEST_POSTGRES_URL is set, a private schema in that
// PostgreSQL database that is dropped when the test ends.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/store"
)

// PostgresEnv names the variable that enables the PostgreSQL runs.
const PostgresEnv = "MSGSVC_TEST_POSTGRES_URL"

// Dialects are the engines a test runs on: "sqlite" and "postgres". A
// PostgreSQL run without PostgresEnv set is skipped (Need) with a
// "--- SKIP" line that says how to run it, rather than left out unseen.
func Dialects() []string {
	return []string{"sqlite", "postgres"}
}

// Need skips the (sub)test when dialect is PostgreSQL and PostgresEnv is
// not set, saying how to run it.
func Need(t testing.TB, dialect string) {
	t.Helper()
	if dialect == "postgres" && os.Getenv(PostgresEnv) == "" {
		t.Skipf("PostgreSQL run skipped: set %s (e.g. postgres://postgres@127.0.0.1:5432/test) to run it", PostgresEnv)
	}
}

// Each runs fn as a subtest on every dialect with a fresh, migrated store
// (and its DSN, for starting processes on it).
func Each(t *testing.T, fn func(t *testing.T, st *store.Store, dsn string)) {
	t.Helper()
	for _, d := range Dialects() {
		t.Run(d, func(t *testing.T) {
			Need(t, d)
			dsn := Migrated(t, d)
			fn(t, Open(t, dsn), dsn)
		})
	}
}

// DSN makes a fresh database for a dialect and returns its DSN; it is
// removed when the test ends.
func DSN(t testing.TB, dialect string) string {
	t.Helper()
	if dialect == "sqlite" {
		return filepath.Join(t.TempDir(), sqliteName)
	}
	Need(t, dialect)
	base := os.Getenv(PostgresEnv)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Migrated is DSN with the database already at the latest migration, for
// the tests that start from the current schema (nearly all of them). On
// SQLite it is a copy of one database migrated once per test binary:
// under the race detector, migrating a database from nothing takes about
// two seconds, most of what an application test spends setting up. On
// PostgreSQL it is a fresh schema, migrated by whoever opens it, as DSN's.
// Opening it still runs Migrate, which finds nothing to do.
func Migrated(t testing.TB, dialect string) string {
	t.Helper()
	if dialect != "sqlite" {
		return DSN(t, dialect)
	}
	files, err := sqliteTemplate()
	if err != nil {
		t.Fatalf("migrated SQLite template: %v", err)
	}
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, sqliteName)
}

// sqliteName is the file name of every test's SQLite database.
const sqliteName = "msgsvc.db"

// sqliteTemplate is the migrated database Migrated copies, made by the
// first test that asks and kept in memory for the life of the test binary,
// so that it leaves nothing behind on disk.
var sqliteTemplate = sync.OnceValues(migrateTemplate)

// migrateTemplate migrates a database in a directory of its own, closes it
// and reads back its files: the database and, should closing have left one,
// its write-ahead log, which the copy's first open replays. The shared-memory
// index is not copied; SQLite rebuilds it from the log.
func migrateTemplate() (map[string][]byte, error) {
	dir, err := os.MkdirTemp("", "msgsvc-storetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, sqliteName), store.Options{})
	if err != nil {
		return nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	if err := st.Close(); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if e.Name() != sqliteName && e.Name() != sqliteName+"-wal" {
			continue
		}
		if out[e.Name()], err = os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
			return nil, err
		}
	}
	if out[sqliteName] == nil {
		return nil, fmt.Errorf("no %s after migrating", sqliteName)
	}
	return out, nil
}

// Open opens and migrates a store at dsn, closed when the test ends.
func Open(t testing.TB, dsn string) *store.Store {
	t.Helper()
	return OpenWith(t, dsn, store.Options{})
}

// OpenWith is Open with options (e.g. a node's Holder).
func OpenWith(t testing.TB, dsn string, o store.Options) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

// NewAccount creates a plain account (free tier, USD), made at created,
// for tests that need one to own what they store, and returns its id.
func NewAccount(t testing.TB, st *store.Store, created time.Time) string {
	t.Helper()
	a := domain.Account{ID: id.New(id.Account, created), Name: "A", Tier: "free", Currency: "USD", CountryCode: "1",
		WebhookSecret: "s", CreatedAt: created}
	if err := st.CreateAccount(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// CheckBalance asserts the invariant of the money model: an account's
// balance is the sum of its ledger and never negative.
func CheckBalance(t testing.TB, st *store.Store, accountID string, want int64) {
	t.Helper()
	ctx := context.Background()
	a, err := st.Account(ctx, accountID)
	if err != nil {
		t.Fatalf("read account: %v", err)
	}
	sum, err := st.LedgerSum(ctx, accountID)
	if err != nil {
		t.Fatalf("ledger sum: %v", err)
	}
	if a.Balance != want || sum != want || a.Balance < 0 {
		t.Fatalf("balance %d, ledger sum %d; want both %d", a.Balance, sum, want)
	}
}

// CheckUsage fails the test unless the account's kept usage counts equal
// what its messages add up to.
func CheckUsage(t testing.TB, st *store.Store, accountID string) {
	t.Helper()
	ctx := context.Background()
	kept, err := st.KeptUsage(ctx, accountID)
	if err != nil {
		t.Fatalf("kept usage: %v", err)
	}
	counted, err := st.UsageFromMessages(ctx, accountID)
	if err != nil {
		t.Fatalf("usage from messages: %v", err)
	}
	if !reflect.DeepEqual(kept, counted) {
		t.Fatalf("kept usage\n%+v\ndiffers from the messages'\n%+v", kept, counted)
	}
}
