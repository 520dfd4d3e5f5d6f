//go:build !cgosqlite

package store

import (
	"encoding/binary"
	"fmt"
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// walVFSName is the VFS every SQLite connection of this build opens its
// database through: the operating system's own VFS, with the writes to
// the write-ahead log gathered into one system call per transaction.
//
// SQLite appends a transaction to the WAL one frame at a time, and every
// frame in two writes (its 24-byte header, then the page): a transaction
// of sixteen pages cost thirty-two pwrite calls, about ten per message on
// the carrier path. The WAL is only ever appended to by the connection
// that holds its write lock, and no other connection looks at frames
// before the commit that makes them part of the log. So the frames of a
// transaction are collected in a buffer and written in one pwrite as soon
// as the commit frame (the one whose header carries the database size) is
// complete. That write returns its error to SQLite as the frame's own
// write would have, so a failed commit fails as before; a crash before it
// leaves the log as a crash halfway through the frames would have. Any
// other use of the log file (a read, a sync, its size, truncating,
// closing) writes out the buffer first, and so does the memory barrier
// that precedes the publication of a commit in the shared wal-index,
// which no commit can skip.
const walVFSName = "msgsvc-wal"

// walBufMax bounds a transaction's buffered frames: a larger one (a
// migration, a bulk deletion) is written out each time this much gathers.
const walBufMax = 1 << 20

// walFrameHeader is the size of a WAL frame's header; its bytes 4 to 8
// hold the database size in pages for a commit frame, zero otherwise.
const walFrameHeader = 24

// The signatures of the sqlite3_vfs and sqlite3_io_methods entries used
// here, as modernc's translation of SQLite declares them.
type (
	xOpenFn        = func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32
	xCloseFn       = func(*libc.TLS, uintptr) int32
	xReadWriteFn   = func(*libc.TLS, uintptr, uintptr, int32, int64) int32
	xTruncateFn    = func(*libc.TLS, uintptr, int64) int32
	xSyncFn        = func(*libc.TLS, uintptr, int32) int32
	xFileSizeFn    = func(*libc.TLS, uintptr, uintptr) int32
	xFileControlFn = func(*libc.TLS, uintptr, int32, uintptr) int32
	xShmBarrierFn  = func(*libc.TLS, uintptr)
)

// callable turns a function pointer stored in a SQLite structure into a
// Go function value: in modernc's translation both are the same word.
func callable[F any](p uintptr) F { return *(*F)(unsafe.Pointer(&p)) }

// cptr is the pointer a C address stands for. The address is read as a
// pointer from memory rather than converted, which is the same thing at
// run time; it is never an address in Go's heap (see walLog.buf).
func cptr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }

// store puts a Go function into a SQLite structure's function pointer
// slot. Only top-level functions are stored: they are never collected.
func store[F any](slot *uintptr, f F) { *(*F)(unsafe.Pointer(slot)) = f }

// walVFS is the process's one registration of the VFS: SQLite's registry
// of VFSes is process-wide, and so is this.
type walVFS struct {
	base uintptr // the default VFS, which does the work

	mu       sync.RWMutex
	copies   map[methodsKey]uintptr  // a file's original methods -> the copy that goes through here
	original map[uintptr]uintptr     // a copy -> the original methods (the barrier looks them up)
	logs     map[uintptr]*walLog     // an open WAL file -> its buffer
	byConn   map[*libc.TLS][]*walLog // a connection (its TLS) -> its open WAL files
	err      error
}

type methodsKey struct {
	orig uintptr
	wal  bool
}

var (
	walOnce sync.Once
	theWAL  walVFS
)

// registerWALVFS registers the VFS once per process.
func registerWALVFS() error {
	walOnce.Do(func() { theWAL.err = theWAL.register() })
	return theWAL.err
}

func (v *walVFS) register() error {
	tls := libc.NewTLS()
	defer tls.Close()
	// Before anything initializes SQLite (finding a VFS does).
	configureSQLite(tls)
	v.base = sqlite3.Xsqlite3_vfs_find(tls, 0)
	if v.base == 0 {
		return fmt.Errorf("sqlite: no default VFS")
	}
	v.copies, v.original = map[methodsKey]uintptr{}, map[uintptr]uintptr{}
	v.logs, v.byConn = map[uintptr]*walLog{}, map[*libc.TLS][]*walLog{}
	p := libc.Xcalloc(tls, 1, libc.Tsize_t(unsafe.Sizeof(sqlite3.Tsqlite3_vfs{})))
	name, err := libc.CString(walVFSName)
	if p == 0 || err != nil {
		return fmt.Errorf("sqlite: cannot allocate the WAL VFS")
	}
	ours := (*sqlite3.Tsqlite3_vfs)(cptr(p))
	*ours = *(*sqlite3.Tsqlite3_vfs)(cptr(v.base))
	ours.FpNext, ours.FzName = 0, name
	store[xOpenFn](&ours.FxOpen, walVFSOpen)
	if rc := sqlite3.Xsqlite3_vfs_register(tls, p, 0); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("sqlite: registering the WAL VFS: code %d", rc)
	}
	return nil
}

// walLog is one connection's open WAL file and the frames it has not
// written yet. Only its connection uses it, one call at a time.
type walLog struct {
	path    string  // the log's file name
	writes  int     // writes made to the file (tests count them)
	late    int     // frames the barrier found still buffered (tests expect none)
	file    uintptr // the sqlite3_file
	methods *sqlite3.Tsqlite3_io_methods
	conn    *libc.TLS
	buf     uintptr // C memory: checkptr refuses Go memory behind a uintptr
	cap     int
	n       int
	off     int64 // where buf[0] goes in the file
	// commitNext: the last write was a commit frame's header, so the
	// write after it completes the commit.
	commitNext bool
}

func walVFSOpen(tls *libc.TLS, pVfs, zName, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	v := &theWAL
	base := (*sqlite3.Tsqlite3_vfs)(cptr(v.base))
	rc := callable[xOpenFn](base.FxOpen)(tls, v.base, zName, pFile, flags, pOutFlags)
	f := (*sqlite3.Tsqlite3_file)(cptr(pFile))
	if rc != sqlite3.SQLITE_OK || f.FpMethods == 0 {
		return rc
	}
	isWAL := flags&sqlite3.SQLITE_OPEN_WAL != 0
	if !isWAL && flags&sqlite3.SQLITE_OPEN_MAIN_DB == 0 {
		return rc // journals, temporary files: as they are
	}
	orig := f.FpMethods
	v.mu.Lock()
	defer v.mu.Unlock()
	key := methodsKey{orig, isWAL}
	c, ok := v.copies[key]
	if !ok {
		c = libc.Xmalloc(tls, libc.Tsize_t(unsafe.Sizeof(sqlite3.Tsqlite3_io_methods{})))
		if c == 0 {
			callable[xCloseFn]((*sqlite3.Tsqlite3_io_methods)(cptr(orig)).FxClose)(tls, pFile)
			return sqlite3.SQLITE_NOMEM
		}
		m := (*sqlite3.Tsqlite3_io_methods)(cptr(c))
		*m = *(*sqlite3.Tsqlite3_io_methods)(cptr(orig))
		if isWAL {
			store[xReadWriteFn](&m.FxWrite, walWrite)
			store[xReadWriteFn](&m.FxRead, walRead)
			store[xTruncateFn](&m.FxTruncate, walTruncate)
			store[xSyncFn](&m.FxSync, walSync)
			store[xFileSizeFn](&m.FxFileSize, walFileSize)
			store[xFileControlFn](&m.FxFileControl, walFileControl)
			store[xCloseFn](&m.FxClose, walClose)
		} else if m.FxShmBarrier != 0 {
			store[xShmBarrierFn](&m.FxShmBarrier, walShmBarrier)
		}
		v.copies[key], v.original[c] = c, orig
	}
	f.FpMethods = c
	if isWAL {
		l := &walLog{path: libc.GoString(zName), file: pFile, methods: (*sqlite3.Tsqlite3_io_methods)(cptr(orig)), conn: tls}
		v.logs[pFile] = l
		v.byConn[tls] = append(v.byConn[tls], l)
	}
	return rc
}

// log returns the buffer of a WAL file opened through here.
func (v *walVFS) log(pFile uintptr) *walLog {
	v.mu.RLock()
	l := v.logs[pFile]
	v.mu.RUnlock()
	if l == nil {
		panic("sqlite: a WAL file unknown to the WAL VFS")
	}
	return l
}

// walWriteMax is the most one write of the base VFS takes: SQLite's unix
// VFS masks a write's length to 17 bits (and then reports a write of an
// exact multiple of 128 KiB as a full disk).
const walWriteMax = 120 << 10

// flush writes out the buffered frames.
func (l *walLog) flush(tls *libc.TLS) int32 {
	n, off := l.n, l.off
	l.n, l.commitNext = 0, false
	for done := 0; done < n; {
		k := min(n-done, walWriteMax)
		l.writes++
		if rc := callable[xReadWriteFn](l.methods.FxWrite)(tls, l.file, l.buf+uintptr(done), int32(k), off+int64(done)); rc != sqlite3.SQLITE_OK {
			return rc
		}
		done += k
	}
	return sqlite3.SQLITE_OK
}

func walWrite(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	l := theWAL.log(pFile)
	m := l.methods
	n := int(iAmt)
	if l.n > 0 && (iOfst != l.off+int64(l.n) || l.n+n > walBufMax) {
		if rc := l.flush(tls); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	if n > walWriteMax {
		l.writes++
		return callable[xReadWriteFn](m.FxWrite)(tls, pFile, zBuf, iAmt, iOfst)
	}
	if l.n+n > l.cap {
		c := max(64<<10, 2*l.cap, l.n+n)
		p := libc.Xrealloc(tls, l.buf, libc.Tsize_t(c))
		if p == 0 {
			if rc := l.flush(tls); rc != sqlite3.SQLITE_OK {
				return rc
			}
			l.writes++
			return callable[xReadWriteFn](m.FxWrite)(tls, pFile, zBuf, iAmt, iOfst)
		}
		l.buf, l.cap = p, c
	}
	if l.n == 0 {
		l.off = iOfst
	}
	src := unsafe.Slice((*byte)(cptr(zBuf)), n)
	copy(unsafe.Slice((*byte)(cptr(l.buf+uintptr(l.n))), n), src)
	l.n += n
	if l.commitNext {
		return l.flush(tls) // the commit frame's page: the transaction is whole
	}
	l.commitNext = n == walFrameHeader && binary.BigEndian.Uint32(src[4:8]) != 0
	return sqlite3.SQLITE_OK
}

func walRead(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	l := theWAL.log(pFile)
	if rc := l.flush(tls); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callable[xReadWriteFn](l.methods.FxRead)(tls, pFile, zBuf, iAmt, iOfst)
}

func walTruncate(tls *libc.TLS, pFile uintptr, size int64) int32 {
	l := theWAL.log(pFile)
	if rc := l.flush(tls); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callable[xTruncateFn](l.methods.FxTruncate)(tls, pFile, size)
}

func walSync(tls *libc.TLS, pFile uintptr, flags int32) int32 {
	l := theWAL.log(pFile)
	if rc := l.flush(tls); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callable[xSyncFn](l.methods.FxSync)(tls, pFile, flags)
}

func walFileSize(tls *libc.TLS, pFile, pSize uintptr) int32 {
	l := theWAL.log(pFile)
	if rc := l.flush(tls); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callable[xFileSizeFn](l.methods.FxFileSize)(tls, pFile, pSize)
}

func walFileControl(tls *libc.TLS, pFile uintptr, op int32, pArg uintptr) int32 {
	l := theWAL.log(pFile)
	if rc := l.flush(tls); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callable[xFileControlFn](l.methods.FxFileControl)(tls, pFile, op, pArg)
}

func walClose(tls *libc.TLS, pFile uintptr) int32 {
	v := &theWAL
	l := v.log(pFile)
	rc := l.flush(tls)
	v.mu.Lock()
	delete(v.logs, pFile)
	kept := make([]*walLog, 0, len(v.byConn[l.conn]))
	for _, o := range v.byConn[l.conn] {
		if o != l {
			kept = append(kept, o)
		}
	}
	if len(kept) == 0 {
		delete(v.byConn, l.conn)
	} else {
		v.byConn[l.conn] = kept
	}
	v.mu.Unlock()
	if l.buf != 0 {
		libc.Xfree(tls, l.buf)
	}
	if crc := callable[xCloseFn](l.methods.FxClose)(tls, pFile); rc == sqlite3.SQLITE_OK {
		rc = crc
	}
	return rc
}

// walShmBarrier precedes every publication of a commit in the wal-index:
// whatever the connection still holds of its log is written first. The
// commit frame's own write has always done it already; this is the
// guarantee that no reader is ever shown a frame not in the file. A
// barrier cannot fail, so a write that fails here ends the process before
// the commit is published: the log, read again at the next start, ends
// where its last whole transaction does.
func walShmBarrier(tls *libc.TLS, pFile uintptr) {
	v := &theWAL
	w := (*sqlite3.Tsqlite3_file)(cptr(pFile)).FpMethods
	v.mu.RLock()
	orig, logs := v.original[w], v.byConn[tls]
	v.mu.RUnlock()
	for _, l := range logs {
		if l.n > 0 {
			l.late++
		}
		if rc := l.flush(tls); rc != sqlite3.SQLITE_OK {
			panic(fmt.Sprintf("sqlite: writing the write-ahead log before a commit is published failed (code %d)", rc))
		}
	}
	callable[xShmBarrierFn]((*sqlite3.Tsqlite3_io_methods)(cptr(orig)).FxShmBarrier)(tls, pFile)
}
