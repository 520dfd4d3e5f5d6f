package api

import (
	"context"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/message"
)

// What the integration handlers of handlers.go and lists.go call. Each is
// as narrow as its handlers need, so that a test fakes only what it drives
// and the send path can move out of message without api noticing.

// Sender takes a send (POST messages): the core's typed request from a
// principal (intake.Service is one).
type Sender interface {
	Send(ctx context.Context, p domain.Principal, req domain.SendRequest, opt intake.SendOptions) (intake.Outcome, error)
}

// Reads reads what was sent and cancels or redacts it, always within the
// caller's scope (account and environment).
type Reads interface {
	Get(ctx context.Context, sc message.Scope, messageID string) (domain.Message, error)
	List(ctx context.Context, sc message.Scope, f message.ListFilter) (message.MessagePage, error)
	Events(ctx context.Context, sc message.Scope, after int64, limit int) (message.EventPage, error)
	Campaign(ctx context.Context, sc message.Scope, campaignID, cursor string, limit int) (message.CampaignPage, error)
	Cancel(ctx context.Context, sc message.Scope, messageID string) (domain.Message, error)
	CancelCampaign(ctx context.Context, sc message.Scope, campaignID string) ([]domain.Message, error)
	Redact(ctx context.Context, sc message.Scope, messageID string) (domain.Message, error)
}

// Accounts reads an account afresh (GET balance).
type Accounts interface {
	Account(ctx context.Context, id string) (domain.Account, error)
}

// IdempotencyStore remembers the answers of POSTs other than sends (which
// keep theirs in their own transaction) by API key and Idempotency-Key.
type IdempotencyStore interface {
	Idempotency(ctx context.Context, keyID, key string) (domain.Idempotency, error)
	SaveIdempotency(ctx context.Context, in domain.Idempotency) error
}
