package message

import (
	"context"
	"errors"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// RedactTx is what erasing a message needs of a write transaction: the
// cancel of a message not yet handed over (reports) and the redaction.
type RedactTx interface {
	TrackTx
	RedactMessages(ctx context.Context, ids []string, r domain.Redaction) error
}

// ErrNoRedactor: the service was built without a redaction key.
var ErrNoRedactor = errors.New("redaction is not configured")

// Redact erases a message's text and replaces its recipient by the keyed
// hash at once (POST …/messages/{id}/redact), with the
// webhook events about it. Its status, price, counts and ledger lines
// stay. A message still waiting for a provider is canceled first (and
// refunded): it could not be sent to a hash. One being handed over at
// this moment is ErrHandingOver; redacting twice changes nothing.
func (s *Service) Redact(ctx context.Context, sc Scope, messageID string) (domain.Message, error) {
	if s.redaction == nil {
		return domain.Message{}, ErrNoRedactor
	}
	if _, err := s.store.Message(ctx, sc.AccountID, sc.Env, messageID); err != nil {
		return domain.Message{}, err
	}
	var out domain.Message
	var queued []domain.Event
	now := s.now().UTC()
	err := s.store.Write(ctx, func(tx Tx) error {
		ids := []string{messageID}
		msgs, err := tx.LockMessages(ctx, ids)
		if err != nil {
			return err
		}
		m, ok := msgs[messageID]
		switch {
		case !ok:
			return ErrNotFound
		case m.Status == domain.Sending && !m.Cancelable(now):
			return ErrHandingOver
		case m.Status == domain.Sending:
			if queued, err = applyReports(ctx, tx, []Report{{Kind: Cancel, MessageID: messageID, At: now}}, now, eventLease{}, nil); err != nil {
				return err
			}
		}
		if err := tx.RedactMessages(ctx, ids, *s.redaction); err != nil {
			return err
		}
		after, err := tx.LockMessages(ctx, ids)
		out = after[messageID]
		return err
	})
	if err != nil {
		return domain.Message{}, err
	}
	if len(queued) > 0 {
		s.events()
	}
	return out, nil
}
