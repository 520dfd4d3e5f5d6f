// Package provider defines what msgsvc needs from a carrier or messaging
// platform (an adapter hands messages over and reports back) and routes each
// message to one.
package provider

import (
	"context"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// Outbound is a message handed to a provider.
type Outbound struct {
	ID          string
	AccountID   string // whose message: uploaded media (mediaId) is the account's
	Env         domain.Environment
	To          string
	CountryCode string
	From        string // the sender; empty for the provider's default
	Channel     domain.Channel
	Body        string         // the text; a rendered template's text on WhatsApp
	Content     domain.Content // rich content, empty for plain text
	ExpiresAt   time.Time
}

// Error is a provider's refusal. Temporary errors are retried; permanent
// ones fail the message with Code as its webhook errorCode.
type Error struct {
	Code      string
	Message   string
	Temporary bool
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Result is the outcome of one submission: Ref is the provider's id for
// the message, used to match its later reports.
type Result struct {
	Ref string
	// Parts are the provider's ids of every part when it took the message
	// in several (SMPP segments), in order; Ref is the first. Reports may
	// name any of them.
	Parts []string
	// FallbackAt, when set, is when the provider should be asked to take
	// the message back (Revoker) if it is still undelivered, so
	// that its SMS fallback goes out instead. Only for a message with a
	// fallback, and before its validity ends.
	FallbackAt time.Time
	Err        *Error
}

// Revocation is the outcome of asking a provider to take back a message it
// accepted: Revoked when it will never be delivered; false with no Err
// when it was too late (delivered, or being delivered).
type Revocation struct {
	Revoked bool
	Err     *Error
}

// Provider hands messages to a channel. Submit returns one result per
// message, in order; it may take a batch at once (SMPP windows, HTTP/2).
type Provider interface {
	Name() string
	Submit(ctx context.Context, msgs []Outbound) []Result
}

// Status is a provider's delivery report.
type Status struct {
	MessageID    string        // when the provider knows our id
	Ref          string        // otherwise its own id from Result.Ref
	Status       domain.Status // SENT, DELIVERED, READ, FAILED
	ErrorCode    string
	ErrorMessage string
	At           time.Time
}

// Inbound is a message a recipient sent.
type Inbound struct {
	ReplyTo   string // our message id, when the provider threads replies
	AccountID string // else the account and environment it was sent to
	Env       domain.Environment
	From      string
	To        string // the number, sender or agent it was sent to
	Channel   domain.Channel
	Body      string
	At        time.Time
	// Ref is the provider's id of the message, when it gives one: a
	// message delivered again under the same Ref is recorded once.
	Ref string
}

// Querier is a provider that can be asked how a message it accepted ended,
// for reports that never came (a carrier that dropped a receipt, a receipt
// lost with a connection whose peer does not send it again).
type Querier interface {
	// Query asks about messages by the provider's ids and returns the
	// final statuses it learned; a message still on its way, or one the
	// provider could not be asked about, is left out (ask again later).
	Query(ctx context.Context, qs []QueryRef) ([]Status, error)
}

// QueryRef names a message to ask about: the provider's id and the sender
// it went out with (SMPP's query_sm needs both).
type QueryRef struct {
	Ref  string
	From string
}

// Sink takes what providers report. It returns only when the reports are
// stored, so an adapter acknowledges its peer after Sink said yes.
type Sink interface {
	Statuses(ctx context.Context, provider string, reports []Status) error
	Inbound(ctx context.Context, provider string, in Inbound) error
}

// Expecter is a Sink that can be told a provider's reference the moment the
// provider gives it, before Submit returns: a fast provider's receipt can
// overtake the record of its own hand-over, and a Sink that knows the
// reference is coming holds such a receipt (unacknowledged) until the
// hand-over is recorded, instead of parking it in storage until then.
// Adapters whose receipts can race their submissions call it when their
// Sink offers it.
type Expecter interface {
	Expect(provider, ref string)
}
