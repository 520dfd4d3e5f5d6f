package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// Errors that say the database cannot write are storage unavailable (the
// API answers 503 and readiness fails); the request's own errors and the
// caller's deadline are not (issue 35 item 13).
func TestUnavailableClassification(t *testing.T) {
	yes := []error{
		&pgconn.PgError{Code: "53100"}, // disk_full
		&pgconn.PgError{Code: "53200"}, // out_of_memory
		&pgconn.PgError{Code: "08006"}, // connection_failure
		&pgconn.PgError{Code: "57P01"}, // admin_shutdown
		&pgconn.PgError{Code: "57P03"}, // cannot_connect_now
		&pgconn.PgError{Code: "25006"}, // read_only_sql_transaction
		&pgconn.PgError{Code: "58030"}, // io_error
		&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
		fmt.Errorf("commit: %w", syscall.ENOSPC),
		fmt.Errorf("write: %w", syscall.EFBIG),
		syscall.EROFS,
		io.ErrUnexpectedEOF,
	}
	for _, err := range yes {
		if !unavailable(err) {
			t.Errorf("%#v is not classified storage unavailable", err)
		}
		if c := classify(err); !errors.Is(c, domain.ErrStorageUnavailable) || !errors.Is(c, err) {
			t.Errorf("classify(%v) = %v", err, c)
		}
	}
	no := []error{
		&pgconn.PgError{Code: "23505"}, // unique_violation
		&pgconn.PgError{Code: "40001"}, // serialization_failure (retried)
		&pgconn.PgError{Code: "22001"},
		context.DeadlineExceeded,
		fmt.Errorf("begin: %w", context.Canceled),
		domain.ErrNotFound,
		errors.New("something else"),
	}
	for _, err := range no {
		if unavailable(err) || errors.Is(classify(err), domain.ErrStorageUnavailable) {
			t.Errorf("%#v is classified storage unavailable", err)
		}
	}
}

// The write health follows the last write: a storage failure marks it
// until a write succeeds; other failures leave it as it was.
func TestWriteHealthFollowsTheLastWrite(t *testing.T) {
	var s Store
	s.now = func() (t0 time.Time) { return }
	s.health.observe(classify(syscall.ENOSPC), s.now())
	if err := s.WriteHealth(); !errors.Is(err, domain.ErrStorageUnavailable) {
		t.Fatalf("after a full disk: %v", err)
	}
	s.health.observe(domain.ErrNotFound, s.now())
	if s.WriteHealth() == nil {
		t.Fatal("a request's own error cleared the failure")
	}
	s.health.observe(nil, s.now())
	if err := s.WriteHealth(); err != nil {
		t.Fatalf("after a write that succeeded: %v", err)
	}
}
