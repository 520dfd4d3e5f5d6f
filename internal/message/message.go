// Package message holds the life of a message after its send (accepting
// one is internal/intake's): handing it to a provider (dispatch), moving
// its status forward on reports and writing the webhook events that tell
// the integrator (tracking), and reading it back or canceling it (reads).
// It speaks the domain's types; the HTTP wire is the API's business.
package message

import (
	"context"
	"errors"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/store"
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

// Principal is the caller as the core sees who sends: its account, acting
// with an API key.
func (c Caller) Principal() domain.Principal {
	return domain.Principal{Account: c.Account, Kind: domain.CredentialAPIKey, CredentialID: c.Key.ID, Env: c.Key.Env,
		AuthVersion: c.AuthVersion}
}

// Refusal is a send refused by a channel rule (domain.Refusal).
type Refusal = domain.Refusal

// Errors of the message service beyond validation and refusals.
var (
	ErrNotFound            = domain.ErrNotFound
	ErrInsufficientCredits = intake.ErrInsufficientCredits
	ErrIdempotencyConflict = intake.ErrIdempotencyConflict
	ErrOutsideWindow       = intake.ErrOutsideWindow
	ErrDailyLimit          = intake.ErrDailyLimit
	// ErrNotCancelable: the message was already handed to a provider or ended.
	ErrNotCancelable = errors.New("message can no longer be canceled")
	// ErrOptedOut: a recipient answered a stop word (the error of the
	// RECIPIENT_OPTED_OUT refusal).
	ErrOptedOut = intake.ErrOptedOut
	// ErrHandingOver: the message is being handed to a provider at this
	// moment; an operation that must not race the hand-over can be retried.
	ErrHandingOver = errors.New("message is being handed to a provider")
	// ErrStaleAuth: the caller's key and account were read from a cache at
	// an auth counter that has moved since (Caller.AuthVersion); nothing
	// was written, and the send may be made again after authenticating
	// afresh.
	ErrStaleAuth = intake.ErrStaleAuth
)

// Tx is the write transaction the message service works in; the store's
// transactions implement it. Each use declares the part it needs where it
// is used (intake.SendTx, TrackTx in tracking.go, InboundTx in inbound.go,
// RedactTx in redact.go), so a test fakes only that part.
type Tx interface {
	intake.SendTx
	TrackTx
	InboundTx
	RedactTx
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
