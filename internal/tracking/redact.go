package tracking

import (
	"context"
	"errors"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// ErrHandingOver: the message is being handed to a provider at this
// moment; an operation that must not race the hand-over can be retried.
var ErrHandingOver = errors.New("message is being handed to a provider")

// RedactTx is what erasing a message needs of a write transaction: the
// cancel of a message not yet handed over (reports) and the redaction.
type RedactTx interface {
	StatusTx
	RedactMessages(ctx context.Context, ids []string, r domain.Redaction) error
}

// Cancel cancels those of the messages ids that no provider has yet (and
// refunds them), in one transaction, and returns them as canceled.
func (t *Tracker) Cancel(ctx context.Context, ids []string) ([]domain.Message, error) {
	var canceled []domain.Message
	now := t.now().UTC()
	err := t.write(ctx, func(w Work, emit emitter) error {
		canceled = canceled[:0]
		var err error
		canceled, err = cancel(ctx, w, ids, now, emit)
		return err
	})
	if err != nil {
		return nil, err
	}
	return canceled, nil
}

// cancel is Cancel inside tx.
func cancel(ctx context.Context, tx StatusTx, ids []string, now time.Time, emit emitter) ([]domain.Message, error) {
	msgs, err := tx.LockMessages(ctx, ids)
	if err != nil {
		return nil, err
	}
	var reports []Report
	for _, mid := range ids {
		if m, ok := msgs[mid]; ok && m.Cancelable(now) {
			reports = append(reports, Report{Kind: Cancel, MessageID: mid, At: now})
		}
	}
	if err := applyReports(ctx, tx, reports, now, emit); err != nil {
		return nil, err
	}
	after, err := tx.LockMessages(ctx, ids)
	if err != nil {
		return nil, err
	}
	canceled := make([]domain.Message, 0, len(reports))
	for _, r := range reports {
		canceled = append(canceled, after[r.MessageID])
	}
	return canceled, nil
}

// Redact erases a message's text and replaces its recipient by the keyed
// hash at once, with the notifications about it. Its status, price, counts
// and ledger lines stay. A message still waiting for a provider (or held
// by the fraud guard) is canceled first (and refunded): it could not be sent to a hash. One being
// handed over at this moment is ErrHandingOver; redacting twice changes
// nothing. An unknown id is domain.ErrNotFound.
func (t *Tracker) Redact(ctx context.Context, messageID string, r domain.Redaction) (domain.Message, error) {
	var out domain.Message
	now := t.now().UTC()
	err := t.write(ctx, func(w Work, emit emitter) error {
		var err error
		out, err = redact(ctx, w, messageID, r, now, emit)
		return err
	})
	if err != nil {
		return domain.Message{}, err
	}
	return out, nil
}

// redact is Redact inside tx.
func redact(ctx context.Context, tx RedactTx, messageID string, r domain.Redaction, now time.Time, emit emitter) (domain.Message, error) {
	ids := []string{messageID}
	msgs, err := tx.LockMessages(ctx, ids)
	if err != nil {
		return domain.Message{}, err
	}
	m, ok := msgs[messageID]
	switch {
	case !ok:
		return domain.Message{}, domain.ErrNotFound
	case m.Status == domain.Sending && !m.Cancelable(now):
		return domain.Message{}, ErrHandingOver
	case m.Status == domain.Sending || m.Status == domain.Held:
		// A held message is canceled too: released later, it would go
		// out to the hash.
		if err := applyReports(ctx, tx, []Report{{Kind: Cancel, MessageID: messageID, At: now}}, now, emit); err != nil {
			return domain.Message{}, err
		}
	}
	if err := tx.RedactMessages(ctx, ids, r); err != nil {
		return domain.Message{}, err
	}
	after, err := tx.LockMessages(ctx, ids)
	return after[messageID], err
}
