package message

import (
	"context"
	"errors"
	"time"

	"msgsvc/internal/store"
)

// ErrNotCancelable: the message was already handed to a provider or ended.
var ErrNotCancelable = errors.New("message can no longer be canceled")

// Get returns one message of the account.
func (s *Service) Get(ctx context.Context, accountID, messageID string) (View, error) {
	m, err := s.store.Message(ctx, accountID, messageID)
	if err != nil {
		return View{}, err
	}
	return NewView(m), nil
}

// Campaign returns a campaign with its counts and a page of messages
// after the cursor (a message id).
func (s *Service) Campaign(ctx context.Context, accountID, campaignID, cursor string, limit int) (CampaignView, error) {
	c, err := s.store.Campaign(ctx, accountID, campaignID)
	if err != nil {
		return CampaignView{}, err
	}
	counts, err := s.store.CampaignCounts(ctx, campaignID)
	if err != nil {
		return CampaignView{}, err
	}
	msgs, err := s.store.CampaignMessages(ctx, campaignID, cursor, limit+1)
	if err != nil {
		return CampaignView{}, err
	}
	v := CampaignView{CampaignID: c.ID, Type: c.Type, CreatedAt: Time(c.CreatedAt), Total: c.Total,
		Counts: map[string]int{}, Messages: make([]View, 0, min(len(msgs), limit))}
	for _, st := range []string{Sending, Sent, Delivered, Read, Failed, Canceled} {
		v.Counts[st] = counts[st]
	}
	v.Status = campaignStatus(v.Counts, c.Total)
	if len(msgs) > limit {
		msgs = msgs[:limit]
		next := msgs[limit-1].ID
		v.NextCursor = &next
	}
	for _, m := range msgs {
		v.Messages = append(v.Messages, NewView(m))
	}
	return v, nil
}

// cancelable: still waiting for dispatch, and not held by a dispatcher
// right now (a lease that ran out belongs to nobody).
func cancelable(m store.Message, now time.Time) bool {
	return m.Status == Sending && (m.LeaseOwner == "" || !m.NextAttemptAt.After(now))
}

// Cancel cancels one message that has not been handed to a provider.
func (s *Service) Cancel(ctx context.Context, accountID, messageID string) (View, error) {
	if _, err := s.store.Message(ctx, accountID, messageID); err != nil {
		return View{}, err
	}
	canceled, err := s.cancel(ctx, []string{messageID})
	if err != nil {
		return View{}, err
	}
	if len(canceled) == 0 {
		return View{}, ErrNotCancelable
	}
	return NewView(canceled[0]), nil
}

// CampaignCancel is the answer to a campaign cancel.
type CampaignCancel struct {
	CampaignID string `json:"campaignId"`
	Canceled   int    `json:"canceled"`
	Messages   []View `json:"messages"`
}

// CancelCampaign cancels every cancelable message of a campaign.
func (s *Service) CancelCampaign(ctx context.Context, accountID, campaignID string) (CampaignCancel, error) {
	if _, err := s.store.Campaign(ctx, accountID, campaignID); err != nil {
		return CampaignCancel{}, err
	}
	ids, err := s.store.CancelableMessageIDs(ctx, campaignID)
	if err != nil {
		return CampaignCancel{}, err
	}
	out := CampaignCancel{CampaignID: campaignID, Messages: []View{}}
	for start := 0; start < len(ids); start += 500 {
		canceled, err := s.cancel(ctx, ids[start:min(start+500, len(ids))])
		if err != nil {
			return out, err
		}
		for _, m := range canceled {
			out.Messages = append(out.Messages, NewView(m))
		}
	}
	out.Canceled = len(out.Messages)
	return out, nil
}

func (s *Service) cancel(ctx context.Context, ids []string) ([]store.Message, error) {
	var canceled []store.Message
	var queued []store.Event
	now := s.now().UTC()
	err := s.store.Write(ctx, func(tx *store.Tx) error {
		canceled = canceled[:0]
		msgs, err := tx.LockMessages(ctx, ids)
		if err != nil {
			return err
		}
		var reports []Report
		for _, mid := range ids {
			if m, ok := msgs[mid]; ok && cancelable(m, now) {
				reports = append(reports, Report{Kind: Cancel, MessageID: mid, At: now})
			}
		}
		if queued, err = applyReports(ctx, tx, reports, now, eventLease{}); err != nil {
			return err
		}
		after, err := tx.LockMessages(ctx, ids)
		if err != nil {
			return err
		}
		for _, r := range reports {
			canceled = append(canceled, after[r.MessageID])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(queued) > 0 {
		s.events()
	}
	return canceled, nil
}
