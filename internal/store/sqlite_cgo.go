//go:build cgosqlite

package store

import (
	"database/sql"
	"errors"
	"net/url"

	"github.com/mattn/go-sqlite3"
)

// Built with -tags cgosqlite, SQLite is the C library itself (through
// cgo), which runs SQLite's own work (B-trees, the VDBE) two to three
// times faster than its translation to Go; the binary then needs a C
// toolchain to build and no longer cross-compiles as simply. The default
// build uses the pure-Go driver (sqlite_go.go). Both read and write the
// same files.

const sqliteDriver = "msgsvc-sqlite3"

// SQLiteDriverName names the SQLite driver this binary was built with.
const SQLiteDriverName = "github.com/mattn/go-sqlite3 (cgo)"

func init() {
	// temp_store has no DSN parameter in this driver: set it on connect.
	sql.Register(sqliteDriver, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		_, err := c.Exec("PRAGMA temp_store = MEMORY", nil)
		return err
	}})
}

// sqliteDSN: see sqlite_go.go; the same settings in this driver's words.
// This build writes the log through SQLite's own VFS, a frame at a time.
func sqliteDSN(path string, writer bool) (string, error) {
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_busy_timeout", "10000")
	q.Set("_synchronous", "NORMAL")
	q.Set("_foreign_keys", "1")
	if writer {
		q.Set("_txlock", "immediate")
	}
	return "file:" + path + "?" + q.Encode(), nil
}

func sqliteBusy(err error) bool {
	var lite sqlite3.Error
	if errors.As(err, &lite) {
		return lite.Code == sqlite3.ErrBusy || lite.Code == sqlite3.ErrLocked
	}
	return false
}

func sqliteDuplicate(err error) bool {
	var lite sqlite3.Error
	if errors.As(err, &lite) {
		return lite.ExtendedCode == sqlite3.ErrConstraintUnique || lite.ExtendedCode == sqlite3.ErrConstraintPrimaryKey
	}
	return false
}

// sqliteUnavailable: see sqlite_go.go.
func sqliteUnavailable(err error) bool {
	var lite sqlite3.Error
	if errors.As(err, &lite) {
		switch lite.Code {
		case sqlite3.ErrFull, sqlite3.ErrIoErr, sqlite3.ErrReadonly, sqlite3.ErrCantOpen:
			return true
		}
	}
	return false
}
