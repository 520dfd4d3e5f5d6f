package message

import (
	"context"
	"errors"

	"msgsvc/internal/domain"
	"msgsvc/internal/ledger"
	"msgsvc/internal/store"
)

// pendingSend is one accepted send, ready to be written: the campaign, its
// messages, the conversations it opens and the response to remember under
// its idempotency key.
type pendingSend struct {
	campaign      domain.Campaign
	messages      []domain.Message
	conversations *store.Conversations
	idem          *store.Idempotency
}

// sendResult tells how one pendingSend of a batch ended: replayed from an
// earlier request with the same key, or refused (err is
// ErrInsufficientCredits, a *store.DailyLimitError or
// ErrIdempotencyConflict).
type sendResult struct {
	replay *store.Idempotency
	err    error
}

// commitSends writes a batch of sends in one transaction (group commit): on
// SQLite one fsync for many requests is the difference between hundreds and
// thousands of sends per second. A refusal of one send (credits, daily
// limit, idempotency) leaves the others alone; a database error fails the
// batch.
func (s *Service) commitSends(ctx context.Context, sends []pendingSend) ([]sendResult, error) {
	var results []sendResult
	err := s.store.Write(ctx, func(tx Tx) error {
		results = make([]sendResult, len(sends))
		for i, snd := range sends {
			r, err := commitSend(ctx, tx, snd)
			if err != nil {
				return err
			}
			results[i] = r
		}
		return nil
	})
	return results, err
}

// commitSend writes one send. Every check that can refuse it runs before
// its first row is written, since it shares the transaction with others.
func commitSend(ctx context.Context, tx Tx, snd pendingSend) (sendResult, error) {
	if snd.idem != nil {
		prev, fresh, err := tx.ClaimIdempotency(ctx, *snd.idem)
		if err != nil {
			return sendResult{}, err
		}
		if !fresh {
			if prev.RequestHash != snd.idem.RequestHash {
				return sendResult{err: ErrIdempotencyConflict}, nil
			}
			return sendResult{replay: &prev}, nil
		}
	}
	if err := tx.ReserveConversations(ctx, snd.conversations); err != nil {
		if !errors.Is(err, store.ErrDailyLimit) {
			return sendResult{}, err
		}
		return refuse(ctx, tx, snd, err)
	}
	c := snd.campaign
	charges := make([]ledger.Charge, len(snd.messages))
	for i, m := range snd.messages {
		charges[i] = ledger.Charge{MessageID: m.ID, Amount: m.Charged}
	}
	if err := ledger.Reserve(ctx, tx, c.AccountID, c.ID, charges, c.CreatedAt); err != nil {
		if !errors.Is(err, ledger.ErrInsufficientCredits) {
			return sendResult{}, err
		}
		if err := tx.ReleaseConversations(ctx, snd.conversations); err != nil {
			return sendResult{}, err
		}
		return refuse(ctx, tx, snd, err)
	}
	if err := tx.RecordConversations(ctx, snd.conversations); err != nil {
		return sendResult{}, err
	}
	if err := tx.InsertCampaign(ctx, c); err != nil {
		return sendResult{}, err
	}
	return sendResult{}, tx.InsertMessages(ctx, snd.messages)
}

// refuse ends a send that a business rule refused: the refusal is its
// result, and its idempotency key is forgotten so that the client may
// retry once the balance or the limit allows.
func refuse(ctx context.Context, tx Tx, snd pendingSend, why error) (sendResult, error) {
	if snd.idem != nil {
		if err := tx.ForgetIdempotency(ctx, snd.idem.KeyID, snd.idem.Key); err != nil {
			return sendResult{}, err
		}
	}
	return sendResult{err: why}, nil
}
