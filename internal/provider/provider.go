// Package provider defines what msgsvc needs from a carrier or messaging
// platform (an adapter hands messages over and reports back) and routes each
// message to one.
package provider

import (
	"context"
	"time"
)

// Outbound is a message handed to a provider.
type Outbound struct {
	ID          string
	Env         string // "test" or "live"
	To          string
	CountryCode string
	Channel     string // SMS, WHATSAPP, RCS
	Body        string
	Content     string // JSON of rich content, empty for plain text
	ExpiresAt   time.Time
	// From is the sender (an approved sender ID or number); empty means the
	// provider's configured default.
	From string
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
	Err *Error
	// Parts holds the provider's id of every part of a message the provider
	// sends in several parts (SMPP concatenation), in order; Ref is Parts[0].
	// It is nil for providers that report one id per message.
	Parts []string
}

// Provider hands messages to a channel. Submit returns one result per
// message, in order; it may take a batch at once (SMPP windows, HTTP/2).
type Provider interface {
	Name() string
	Submit(ctx context.Context, msgs []Outbound) []Result
}

// Status is a provider's delivery report.
type Status struct {
	MessageID    string // when the provider knows our id
	Ref          string // otherwise its own id from Result.Ref
	Status       string // SENT, DELIVERED, READ, FAILED
	ErrorCode    string
	ErrorMessage string
	At           time.Time
}

// Inbound is a message a recipient sent.
type Inbound struct {
	ReplyTo   string // our message id, when the provider threads replies
	AccountID string // else the account and environment it was sent to
	Env       string
	From      string
	// To is the number or sender ID the message was sent to, when the
	// provider reports it (SMPP dest_addr).
	To      string
	Channel string
	Body    string
	At      time.Time
}

// Sink takes what providers report. It returns only when the reports are
// stored, so an adapter acknowledges its peer after Sink said yes.
type Sink interface {
	Statuses(ctx context.Context, provider string, reports []Status) error
	Inbound(ctx context.Context, provider string, in Inbound) error
}
