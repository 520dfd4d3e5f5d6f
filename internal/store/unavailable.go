package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// unavailable reports whether err says the database cannot write now,
// whatever is asked of it: a full disk, a read-only or failing file system
// (SQLite's FULL, IOERR and READONLY, or the system's own errors), and on
// PostgreSQL a full disk, exhausted resources, a server shutting down or a
// connection that failed. Such an error is not the request's fault, and
// the same request may succeed once the operator made room.
func unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The caller gave up (its deadline satisfies net.Error too): that
		// says nothing of the database.
		return false
	}
	if sqliteUnavailable(err) {
		return true
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch {
		case len(pg.Code) == 5 && (pg.Code[:2] == "53" || pg.Code[:2] == "08" || pg.Code[:2] == "58"):
			// 53: insufficient resources (53100 disk full); 08:
			// connection exceptions; 58: system errors (58030 I/O).
			return true
		case pg.Code == "57P01", pg.Code == "57P02", pg.Code == "57P03", pg.Code == "25006":
			// shut down by an administrator or a crash, starting up,
			// or a read-only transaction (a standby).
			return true
		}
		return false
	}
	var connect *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connect), errors.As(err, &netErr),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EFBIG), errors.Is(err, syscall.EROFS),
		errors.Is(err, syscall.EIO), errors.Is(err, syscall.EDQUOT),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET):
		return true
	}
	return false
}

// classify marks an error that says the database cannot write as
// domain.ErrStorageUnavailable (keeping the driver's error in the chain).
func classify(err error) error {
	if err == nil || errors.Is(err, domain.ErrStorageUnavailable) || !unavailable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", domain.ErrStorageUnavailable, err)
}

// writeHealth remembers whether the last write failed because the database
// could not write, for readiness: a node that cannot write must not say it
// is ready because it can still read.
type writeHealth struct {
	mu     sync.Mutex
	failed error
	since  time.Time
}

func (h *writeHealth) observe(err error, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err == nil:
		h.failed = nil
	case errors.Is(err, domain.ErrStorageUnavailable):
		if h.failed == nil {
			h.since = now
		}
		h.failed = err
	}
}

// WriteHealth is nil while writes succeed; after a write failed because the
// database could not write (see domain.ErrStorageUnavailable), it is that
// failure, until a write succeeds again.
func (s *Store) WriteHealth() error {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	if s.health.failed == nil {
		return nil
	}
	return fmt.Errorf("the last write failed (failing since %s): %w", s.health.since.UTC().Format(time.RFC3339), s.health.failed)
}
