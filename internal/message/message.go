// Package message accepts a send (intake: validate, price, plan, commit)
// and reads messages back (reads); handing them to providers is dispatch's,
// moving their status forward tracking's. It speaks the domain's types; the
// HTTP wire is the API's business.
package message

import (
	"context"
	"errors"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/tracking"
)

// Caller is who makes a request: the account and the key used.
type Caller struct {
	Account domain.Account
	Key     domain.APIKey
	// AuthVersion, when not 0, is the auth counter (store.AuthVersion) that
	// Key and Account were read at, from a cache that did not read the
	// counter for this request: a send commits only if the counter still
	// has this value in its transaction, else it fails with ErrStaleAuth
	// and the caller must authenticate afresh.
	AuthVersion int64
}

// Test reports whether the caller uses a test key.
func (c Caller) Test() bool { return !c.Key.Env.Live() }

// Refusal is a send refused by a channel rule rather than by the shape of a
// field. Code is OUTSIDE_CONVERSATION_WINDOW or DAILY_LIMIT_REACHED; the
// API decides how it answers each code.
type Refusal struct {
	Code   string
	Detail string
	Fields []domain.FieldError
	Err    error
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Detail }

// Unwrap gives ErrOutsideWindow or ErrDailyLimit.
func (r *Refusal) Unwrap() error { return r.Err }

// Errors of the message service beyond validation and refusals.
var (
	ErrNotFound            = domain.ErrNotFound
	ErrInsufficientCredits = ledger.ErrInsufficientCredits
	ErrIdempotencyConflict = domain.ErrIdempotencyConflict
	ErrOutsideWindow       = errors.New("outside the WhatsApp conversation window")
	ErrDailyLimit          = domain.ErrDailyLimit
	// ErrNotCancelable: the message was already handed to a provider or ended.
	ErrNotCancelable = errors.New("message can no longer be canceled")
	// ErrOptedOut: a recipient answered a stop word (the error of the
	// RECIPIENT_OPTED_OUT refusal).
	ErrOptedOut = errors.New("recipient opted out")
	// ErrHandingOver: the message is being handed to a provider at this
	// moment; an operation that must not race the hand-over can be retried.
	ErrHandingOver = tracking.ErrHandingOver
	// ErrStaleAuth: the caller's key and account were read from a cache at
	// an auth counter that has moved since (Caller.AuthVersion); nothing
	// was written, and the send may be made again after authenticating
	// afresh.
	ErrStaleAuth = errors.New("the key or its account changed since it was read")
)

// Tx is the write transaction the message service works in; the store's
// transactions implement it. Each use declares the part it needs where it
// is used (SendTx in commit.go), so a test fakes only that part; changing
// a status is tracking's, in transactions of its own.
type Tx interface {
	SendTx
}

// Writer runs a function in a write transaction and returns once it is
// committed; concurrent callers may share one transaction.
type Writer interface {
	Write(ctx context.Context, fn func(tx Tx) error) error
}

// Storage is the store as the message service uses it: every read of
// *store.Store, and writes whose transactions are typed as Tx, the
// operations the service needs, rather than as the store's own type.
type Storage struct{ *store.Store }

// Write implements Writer.
func (s Storage) Write(ctx context.Context, fn func(tx Tx) error) error {
	return s.Store.Write(ctx, func(tx *store.Tx) error { return fn(tx) })
}
