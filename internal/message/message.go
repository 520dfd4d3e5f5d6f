// Package message reads a message back once intake accepted it (status,
// campaigns, lists, the events feed), and checks whose a message is before
// it is canceled or redacted: changing its status is tracking's, handing it
// to a provider dispatch's. It speaks the domain's types; the HTTP wire is
// the API's business.
package message

import (
	"errors"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
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
	ErrHandingOver = tracking.ErrHandingOver
	// ErrStaleAuth: the caller's key and account were read from a cache at
	// an auth counter that has moved since (Caller.AuthVersion); nothing
	// was written, and the send may be made again after authenticating
	// afresh.
	ErrStaleAuth = intake.ErrStaleAuth
)

// Storage is the store as the reads see it.
type Storage struct{ *store.Store }
