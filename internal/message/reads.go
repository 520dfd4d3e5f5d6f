package message

import (
	"context"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// Scope is what a caller may see: one account's messages in one
// environment. Test and live are separate worlds: the other environment's
// ids are not found.
type Scope struct {
	AccountID string
	Env       domain.Environment
}

// Scope is the caller's.
func (c Caller) Scope() Scope { return Scope{AccountID: c.Account.ID, Env: c.Key.Env} }

// Get returns one message of the scope.
func (s *Service) Get(ctx context.Context, sc Scope, messageID string) (domain.Message, error) {
	return s.store.Message(ctx, sc.AccountID, sc.Env, messageID)
}

// CampaignPage is a campaign with its counts per status and one page of its
// messages; Next is the cursor of the next page ("" on the last).
type CampaignPage struct {
	Campaign domain.Campaign
	Status   string // SENDING while any message is open or held, CANCELED when all were canceled, else COMPLETED
	Counts   map[domain.Status]int
	Messages []domain.Message
	Next     string
}

// Campaign returns a campaign with its counts and a page of messages
// after the cursor (a message id).
func (s *Service) Campaign(ctx context.Context, sc Scope, campaignID, cursor string, limit int) (CampaignPage, error) {
	c, err := s.store.Campaign(ctx, sc.AccountID, sc.Env, campaignID)
	if err != nil {
		return CampaignPage{}, err
	}
	counts, err := s.store.CampaignCounts(ctx, campaignID)
	if err != nil {
		return CampaignPage{}, err
	}
	msgs, err := s.store.CampaignMessages(ctx, campaignID, cursor, limit+1)
	if err != nil {
		return CampaignPage{}, err
	}
	p := CampaignPage{Campaign: c, Counts: map[domain.Status]int{}, Messages: msgs}
	for _, st := range domain.Statuses {
		p.Counts[st] = counts[st]
	}
	p.Counts[domain.Held] = counts[domain.Held]
	p.Status = campaignStatus(p.Counts, c.Total)
	if len(msgs) > limit {
		p.Messages = msgs[:limit]
		p.Next = msgs[limit-1].ID
	}
	return p, nil
}

// campaignStatus summarises a campaign. A held message is not final: an
// operator may still release it, so its campaign is still sending.
func campaignStatus(counts map[domain.Status]int, total int) string {
	if counts[domain.Held]+counts[domain.Sending]+counts[domain.Sent] > 0 {
		return string(domain.Sending)
	}
	if counts[domain.Canceled] == total && total > 0 {
		return string(domain.Canceled)
	}
	return "COMPLETED"
}

// Cancel cancels one message that has not been handed to a provider.
func (s *Service) Cancel(ctx context.Context, sc Scope, messageID string) (domain.Message, error) {
	if _, err := s.store.Message(ctx, sc.AccountID, sc.Env, messageID); err != nil {
		return domain.Message{}, err
	}
	canceled, err := s.cancel(ctx, []string{messageID})
	if err != nil {
		return domain.Message{}, err
	}
	if len(canceled) == 0 {
		return domain.Message{}, ErrNotCancelable
	}
	return canceled[0], nil
}

// CancelCampaign cancels every cancelable message of a campaign and
// returns them.
func (s *Service) CancelCampaign(ctx context.Context, sc Scope, campaignID string) ([]domain.Message, error) {
	if _, err := s.store.Campaign(ctx, sc.AccountID, sc.Env, campaignID); err != nil {
		return nil, err
	}
	ids, err := s.store.CancelableMessageIDs(ctx, campaignID)
	if err != nil {
		return nil, err
	}
	out := []domain.Message{}
	for start := 0; start < len(ids); start += 500 {
		canceled, err := s.cancel(ctx, ids[start:min(start+500, len(ids))])
		if err != nil {
			return out, err
		}
		out = append(out, canceled...)
	}
	return out, nil
}

func (s *Service) cancel(ctx context.Context, ids []string) ([]domain.Message, error) {
	return s.changes.Cancel(ctx, ids)
}
