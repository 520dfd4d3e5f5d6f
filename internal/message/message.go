// Package message holds the life of a message: accepting a send (intake:
// validate, price, plan, commit), handing it to a provider (dispatch),
// moving its status forward on reports and writing the webhook events that
// tell the integrator (tracking), and reading it back (reads). It speaks
// the domain's types; the HTTP wire is the API's business.
package message

import (
	"context"
	"errors"
	"fmt"

	"msgsvc/internal/domain"
	"msgsvc/internal/ledger"
	"msgsvc/internal/store"
)

// Caller is who makes a request: the account and the key used.
type Caller struct {
	Account store.Account
	Key     store.APIKey
}

// Test reports whether the caller uses a test key.
func (c Caller) Test() bool { return !c.Key.Env.Live() }

// FieldError names one invalid field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *FieldError) Error() string { return e.Field + " " + e.Message }

// ValidationError is a refused request, with every field problem found.
type ValidationError struct {
	Detail string
	Fields []FieldError
}

func (e *ValidationError) Error() string {
	if e.Detail != "" {
		return e.Detail
	}
	if len(e.Fields) > 0 {
		return e.Fields[0].Field + " " + e.Fields[0].Message
	}
	return "invalid request"
}

func (e *ValidationError) add(field, format string, args ...any) {
	e.Fields = append(e.Fields, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (e *ValidationError) failed() bool { return len(e.Fields) > 0 || e.Detail != "" }

// IsValidation reports whether err is a validation error.
func IsValidation(err error) (*ValidationError, bool) {
	var v *ValidationError
	ok := errors.As(err, &v)
	return v, ok
}

// Refusal is a send refused by a channel rule rather than by the shape of a
// field. Code is OUTSIDE_CONVERSATION_WINDOW or DAILY_LIMIT_REACHED; the
// API decides how it answers each code.
type Refusal struct {
	Code   string
	Detail string
	Fields []FieldError
	Err    error
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Detail }

// Unwrap gives ErrOutsideWindow or ErrDailyLimit.
func (r *Refusal) Unwrap() error { return r.Err }

// Errors of the message service beyond validation and refusals.
var (
	ErrNotFound            = store.ErrNotFound
	ErrInsufficientCredits = ledger.ErrInsufficientCredits
	ErrIdempotencyConflict = store.ErrIdempotencyConflict
	ErrOutsideWindow       = errors.New("outside the WhatsApp conversation window")
	ErrDailyLimit          = store.ErrDailyLimit
	// ErrNotCancelable: the message was already handed to a provider or ended.
	ErrNotCancelable = errors.New("message can no longer be canceled")
	// ErrOptedOut: a recipient answered a stop word (the error of the
	// RECIPIENT_OPTED_OUT refusal).
	ErrOptedOut = errors.New("recipient opted out")
	// ErrHandingOver: the message is being handed to a provider at this
	// moment; an operation that must not race the hand-over can be retried.
	ErrHandingOver = errors.New("message is being handed to a provider")
)

// Tx is the write transaction the message service works in; the store's
// transactions implement it.
type Tx interface {
	ledger.Tx
	LockMessages(ctx context.Context, ids []string) (map[string]domain.Message, error)
	MessageIDsByProviderRef(ctx context.Context, provider string, refs []string) (map[string]string, error)
	UpdateMessages(ctx context.Context, msgs []domain.Message) error
	InsertEvents(ctx context.Context, evs []store.Event) error
	InsertInbound(ctx context.Context, in store.Inbound) error
	InsertCampaign(ctx context.Context, c domain.Campaign) error
	InsertCampaigns(ctx context.Context, cs []domain.Campaign) error
	InsertMessages(ctx context.Context, msgs []domain.Message) error
	ClaimIdempotency(ctx context.Context, in store.Idempotency) (store.Idempotency, bool, error)
	ForgetIdempotency(ctx context.Context, keyID, key string) error
	ReserveConversations(ctx context.Context, c *store.Conversations) error
	ReleaseConversations(ctx context.Context, c *store.Conversations) error
	RecordConversations(ctx context.Context, c *store.Conversations) error
	InsertParts(ctx context.Context, ps []store.Part) error
	PartsByRef(ctx context.Context, provider string, refs []string) (map[string]store.Part, error)
	SetPartStatus(ctx context.Context, provider, ref string, status domain.Status) ([]store.Part, error)
	ParkReports(ctx context.Context, rs []store.PendingReport) error
	TakePendingReports(ctx context.Context, provider string, refs []string) ([]store.PendingReport, error)
	OptedOut(ctx context.Context, accountID string, env domain.Environment, phones []string) (map[string]bool, error)
	AddOptOut(ctx context.Context, o store.OptOut) (bool, error)
	RemoveOptOut(ctx context.Context, accountID string, env domain.Environment, phone string) (bool, error)
	RedactMessages(ctx context.Context, ids []string, r store.Redaction) error
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
