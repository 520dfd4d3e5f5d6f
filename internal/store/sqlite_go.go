//go:build !cgosqlite

package store

import (
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The default SQLite driver is modernc's: SQLite's C code translated to
// Go, so the binary needs no C compiler and cross-compiles. Building with
// -tags cgosqlite uses the C library instead (sqlite_cgo.go).

const sqliteDriver = "sqlite"

// SQLiteDriverName names the SQLite driver this binary was built with.
const SQLiteDriverName = "modernc.org/sqlite (pure Go)"

// sqliteDSN opens path in WAL mode, through the VFS that writes a
// transaction's log frames at once (walvfs_go.go). synchronous=NORMAL in
// WAL mode keeps every committed transaction across a crash of the process
// (the case we promise); only an OS crash or power loss may drop the last
// few, at a large speed gain. The writer begins its transactions
// IMMEDIATE.
func sqliteDSN(path string, writer bool) (string, error) {
	if err := registerWALVFS(); err != nil {
		return "", err
	}
	dsn := "file:" + path + "?vfs=" + walVFSName + "&_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)" +
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)&_pragma=temp_store(MEMORY)"
	if writer {
		dsn += "&_txlock=immediate"
	}
	return dsn, nil
}

// sqliteBusy: SQLite busy or locked, by the driver's code.
func sqliteBusy(err error) bool {
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		switch lite.Code() & 0xff { // the primary code; extended codes add high bits
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return true
		}
	}
	return false
}

// sqliteDuplicate: a unique or primary key violation, by the driver's code.
func sqliteDuplicate(err error) bool {
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		return lite.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || lite.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// sqliteUnavailable: SQLite could not write the file (disk full, I/O
// error, read-only), by the driver's primary code.
func sqliteUnavailable(err error) bool {
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		switch lite.Code() & 0xff {
		case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN:
			return true
		}
	}
	return false
}
