package message

import (
	"context"
	"errors"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// Changes cancels and erases messages (tracking.Tracker does): a status
// changes in tracking only, with the notifications every front registered.
type Changes interface {
	Cancel(ctx context.Context, ids []string) ([]domain.Message, error)
	Redact(ctx context.Context, messageID string, r domain.Redaction) (domain.Message, error)
}

// ErrNoRedactor: the service was built without a redaction key.
var ErrNoRedactor = errors.New("redaction is not configured")

// Redact erases a message's text and replaces its recipient by the keyed
// hash at once (POST …/messages/{id}/redact), with the webhook events about
// it; see tracking.Tracker.Redact.
func (s *Service) Redact(ctx context.Context, sc Scope, messageID string) (domain.Message, error) {
	if s.redaction == nil {
		return domain.Message{}, ErrNoRedactor
	}
	if _, err := s.store.Message(ctx, sc.AccountID, sc.Env, messageID); err != nil {
		return domain.Message{}, err
	}
	return s.changes.Redact(ctx, messageID, *s.redaction)
}
