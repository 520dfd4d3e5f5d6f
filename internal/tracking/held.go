package tracking

import (
	"context"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// Release lets a message the fraud guard held go out: it becomes SENDING
// and the dispatcher takes it as any other. One not held is
// domain.ErrNotHeld, an unknown id domain.ErrNotFound.
func (t *Tracker) Release(ctx context.Context, messageID, by string) (domain.Message, error) {
	m, err := t.decideHeld(ctx, Report{Kind: Release, MessageID: messageID, By: by})
	if err == nil {
		t.due()
	}
	return m, err
}

// Reject fails a held message with FRAUD_SUSPECTED, refunded at every
// level that paid for it.
func (t *Tracker) Reject(ctx context.Context, messageID, by string) (domain.Message, error) {
	return t.decideHeld(ctx, Report{Kind: RejectHeld, MessageID: messageID, By: by})
}

func (t *Tracker) decideHeld(ctx context.Context, r Report) (domain.Message, error) {
	var out domain.Message
	now := t.now().UTC()
	r.At = now
	err := t.write(ctx, func(w Work, emit emitter) error {
		ids := []string{r.MessageID}
		msgs, err := w.LockMessages(ctx, ids)
		if err != nil {
			return err
		}
		m, ok := msgs[r.MessageID]
		switch {
		case !ok:
			return domain.ErrNotFound
		case m.Status != domain.Held:
			return domain.ErrNotHeld
		}
		if err := applyReports(ctx, w, []Report{r}, now, emit); err != nil {
			return err
		}
		after, err := w.LockMessages(ctx, ids)
		out = after[r.MessageID]
		return err
	})
	return out, err
}

// RejectExpiredHolds rejects the messages held for longer than
// domain.HoldFor, as of now.
func (t *Tracker) RejectExpiredHolds(ctx context.Context, ids []string, now time.Time) error {
	reports := make([]Report, len(ids))
	for i, mid := range ids {
		reports[i] = Report{Kind: RejectHeld, MessageID: mid, At: now, By: "sweeper", ErrorMessage: domain.HoldExpired}
	}
	return t.Apply(ctx, reports)
}
