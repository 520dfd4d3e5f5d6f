//go:build !cgosqlite

package store

import (
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite takes two process-wide settings here, before it is initialized
// (configureSQLite), both about what a statement costs the writer.
//
// Connection mutexes. modernc's driver opens every connection with
// SQLITE_OPEN_FULLMUTEX, so SQLite enters and leaves the connection's own
// mutex around every call: each bind, step, reset and column read. In this
// translation that mutex is emulated in Go, about 4 % of the writer's
// instructions a message. It buys nothing: the driver keeps state of its
// own per connection (the libc.TLS every call runs on) that is used before
// the mutex is reached, so a connection is only ever safe in one goroutine
// at a time anyway, and database/sql (or the writer's turn, for the
// writer's connection) never lends one to two at once. That is SQLite's
// multi-thread mode, which the open flag overrides; so the process's mutex
// methods are SQLite's own, except that a recursive mutex is a placeholder
// that is never locked. SQLite asks for recursive mutexes only for a
// connection and for the guard of its own initialization, which runs here,
// once, before any connection is open. Every other mutex (those guarding
// what connections share: the page cache's groups, the memory allocator,
// a file's locks and wal-index) is the default one, locked as before.
//
// Lookaside. SQLite serves a connection's small allocations from a pool of
// its own (lookaside) before it calls the allocator. The default pool, 48
// KiB, is held for good by the writer's prepared statements, which the
// writer keeps: every allocation a statement made while it ran (its values,
// records and cursors) went to the allocator instead, about 140 a message.
// A pool of 600 KiB a connection serves them all, for about 4 MB in a
// process (the writer's pool holds two connections, the readers' four).
const (
	lookasideSlot  = 1200 // bytes a slot; SQLite also carves slots of 128 from the pool
	lookasideSlots = 500
)

// The signatures of the sqlite3_mutex_methods entries in modernc's
// translation.
type (
	xMutexAllocFn = func(*libc.TLS, int32) uintptr
	xMutexFn      = func(*libc.TLS, uintptr)
	xMutexTestFn  = func(*libc.TLS, uintptr) int32
)

// connMutexes holds SQLite's default mutex methods and the placeholder
// that stands for every connection's mutex. It is set once, before SQLite
// is initialized, and only read after.
var connMutexes struct {
	base        sqlite3.Tsqlite3_mutex_methods
	placeholder uintptr
}

// configureSQLite applies both settings if SQLite has not been initialized
// yet. If it has (something else in the process opened a database first),
// it changes nothing: the defaults are correct, only slower.
func configureSQLite(tls *libc.TLS) {
	// C memory, which the translated code may read; SQLite copies the
	// methods it is given.
	methods := libc.Xcalloc(tls, 1, libc.Tsize_t(unsafe.Sizeof(sqlite3.Tsqlite3_mutex_methods{})))
	va := libc.Xmalloc(tls, 2*libc.Tsize_t(unsafe.Sizeof(uintptr(0))))
	defer libc.Xfree(tls, methods)
	defer libc.Xfree(tls, va)
	if methods == 0 || va == 0 {
		return
	}
	getMutex := func() bool {
		return sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_GETMUTEX, libc.VaList(va, methods)) == sqlite3.SQLITE_OK
	}
	m := (*sqlite3.Tsqlite3_mutex_methods)(cptr(methods))
	// SQLite takes no setting once initialized (GETMUTEX fails then), and
	// its mutex methods are unset until it is. Initializing fills in the
	// defaults; shutting down again (no connection can be open yet) lets
	// them be read and replaced.
	if !getMutex() || m.FxMutexAlloc != 0 {
		return
	}
	if sqlite3.Xsqlite3_initialize(tls) != sqlite3.SQLITE_OK || sqlite3.Xsqlite3_shutdown(tls) != sqlite3.SQLITE_OK ||
		!getMutex() || m.FxMutexAlloc == 0 {
		sqlite3.Xsqlite3_initialize(tls)
		return
	}
	// The placeholder's address stands for every connection's mutex for
	// as long as the process runs; it is never read or written.
	placeholder := libc.Xmalloc(tls, 8)
	if placeholder == 0 {
		sqlite3.Xsqlite3_initialize(tls)
		return
	}
	connMutexes.base, connMutexes.placeholder = *m, placeholder
	store[xMutexAllocFn](&m.FxMutexAlloc, connMutexAlloc)
	store[xMutexFn](&m.FxMutexFree, connMutexFree)
	store[xMutexFn](&m.FxMutexEnter, connMutexEnter)
	store[xMutexTestFn](&m.FxMutexTry, connMutexTry)
	store[xMutexFn](&m.FxMutexLeave, connMutexLeave)
	store[xMutexTestFn](&m.FxMutexHeld, connMutexHeld)
	store[xMutexTestFn](&m.FxMutexNotheld, connMutexNotheld)
	if sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_MUTEX, libc.VaList(va, methods)) != sqlite3.SQLITE_OK {
		connMutexes.placeholder = 0
	}
	sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_LOOKASIDE, libc.VaList(va, int32(lookasideSlot), int32(lookasideSlots)))
	sqlite3.Xsqlite3_initialize(tls)
}

func connMutexAlloc(tls *libc.TLS, id int32) uintptr {
	if id == sqlite3.SQLITE_MUTEX_RECURSIVE {
		return connMutexes.placeholder
	}
	return callable[xMutexAllocFn](connMutexes.base.FxMutexAlloc)(tls, id)
}

// passOn runs the default method f on any mutex but the placeholder.
func passOn(f uintptr, tls *libc.TLS, p uintptr) {
	if p != connMutexes.placeholder {
		callable[xMutexFn](f)(tls, p)
	}
}

func connMutexFree(tls *libc.TLS, p uintptr) { passOn(connMutexes.base.FxMutexFree, tls, p) }

func connMutexEnter(tls *libc.TLS, p uintptr) { passOn(connMutexes.base.FxMutexEnter, tls, p) }

func connMutexLeave(tls *libc.TLS, p uintptr) { passOn(connMutexes.base.FxMutexLeave, tls, p) }

func connMutexTry(tls *libc.TLS, p uintptr) int32 {
	if p == connMutexes.placeholder {
		return sqlite3.SQLITE_OK
	}
	return callable[xMutexTestFn](connMutexes.base.FxMutexTry)(tls, p)
}

// connMutexHeld and connMutexNotheld serve SQLite's assertions only (not
// compiled into this build, whose default methods leave them out). The
// placeholder, and a method left out, answer yes, as SQLite's own no-op
// mutexes do.
func connMutexHeld(tls *libc.TLS, p uintptr) int32 {
	return askHeld(connMutexes.base.FxMutexHeld, tls, p)
}

func connMutexNotheld(tls *libc.TLS, p uintptr) int32 {
	return askHeld(connMutexes.base.FxMutexNotheld, tls, p)
}

func askHeld(f uintptr, tls *libc.TLS, p uintptr) int32 {
	if p == connMutexes.placeholder || f == 0 {
		return 1
	}
	return callable[xMutexTestFn](f)(tls, p)
}
