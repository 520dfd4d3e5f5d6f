package domain

import (
	"errors"
	"fmt"
)

// Sentinel errors of reads and writes. Only the fronts (API, panel) turn
// them into answers.
var (
	ErrNotFound            = errors.New("not found")
	ErrConflict            = errors.New("conflict")
	ErrIdempotencyConflict = errors.New("idempotency key reused with a different request")
)

// ErrDecided: the limit request was already approved or rejected.
var ErrDecided = fmt.Errorf("limit request already decided: %w", ErrConflict)

// ErrSystemIDTaken: another SMPP user already has the system_id.
var ErrSystemIDTaken = fmt.Errorf("system_id taken: %w", ErrConflict)

// ErrSenderTaken: the sender's value is approved for another account on
// that channel.
var ErrSenderTaken = fmt.Errorf("sender held by another account: %w", ErrConflict)

// ErrSenderDecided: the sender request was already approved or rejected.
var ErrSenderDecided = fmt.Errorf("sender already decided: %w", ErrConflict)

// ErrStorageUnavailable: the database cannot take writes now (a full
// disk, a read-only or failing file system, a database that does not
// answer). Nothing was written; the same request may succeed later, so the
// fronts answer "retry later" rather than "failed".
var ErrStorageUnavailable = errors.New("storage unavailable")

// ErrSuspended: the account, or one above it in the tree, is suspended;
// nothing it asks for is done until it is resumed.
var ErrSuspended = errors.New("account suspended")
