package message

import (
	"context"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// Store is everything the reads, cancels and redactions of messages read
// and write.
type Store interface {
	Message(ctx context.Context, accountID string, env domain.Environment, messageID string) (domain.Message, error)
	Campaign(ctx context.Context, accountID string, env domain.Environment, campaignID string) (domain.Campaign, error)
	CampaignCounts(ctx context.Context, campaignID string) (map[domain.Status]int, error)
	CampaignMessages(ctx context.Context, campaignID, after string, limit int) ([]domain.Message, error)
	CancelableMessageIDs(ctx context.Context, campaignID string) ([]string, error)
	SearchMessages(ctx context.Context, f domain.MessageFilter) ([]domain.Message, error)
	Feed(ctx context.Context, accountID string, env domain.Environment, after int64, limit int) ([]domain.FeedEvent, error)
}

// Service reads an account's messages, campaigns and events back, and
// cancels and redacts messages: what an integrator does with a message once
// intake accepted it. Cancel and Redact change a status, which is
// tracking's alone: they check whose the message is here and hand the
// change to Changes (the tracker), so every front's notification follows.
type Service struct {
	store     Store
	now       func() time.Time
	redaction *domain.Redaction
	changes   Changes
}

// Config sets up a Service.
type Config struct {
	Store Store
	Now   func() time.Time
	// Redaction hashes numbers and rewrites webhook bodies for Redact; nil
	// refuses it.
	Redaction *domain.Redaction
	// Changes cancels and erases messages (the tracker).
	Changes Changes
}

// NewService makes a Service.
func NewService(c Config) *Service {
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Service{store: c.Store, now: c.Now, redaction: c.Redaction, changes: c.Changes}
}
