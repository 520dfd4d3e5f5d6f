package message

import (
	"context"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// ListFilter narrows a list of messages; zero fields do not filter.
type ListFilter struct {
	Status                 domain.Status
	To                     string
	CampaignID             string
	Reference              string
	CreatedFrom, CreatedTo time.Time // CreatedTo excluded
	// After is the cursor: the last message of the previous page.
	After string
	Limit int
}

// MessagePage is one page of a message list, newest first; Next is the
// cursor of the next page ("" on the last).
type MessagePage struct {
	Messages []domain.Message
	Next     string
}

// List returns the scope's messages, newest first in write order.
func (s *Service) List(ctx context.Context, sc Scope, f ListFilter) (MessagePage, error) {
	msgs, err := s.store.SearchMessages(ctx, domain.MessageFilter{AccountID: sc.AccountID, Env: sc.Env, Phone: f.To,
		Status: f.Status, CampaignID: f.CampaignID, Reference: f.Reference, From: f.CreatedFrom, To: f.CreatedTo,
		Before: f.After, Limit: f.Limit + 1})
	if err != nil {
		return MessagePage{}, err
	}
	p := MessagePage{Messages: msgs}
	if len(msgs) > f.Limit {
		p.Messages = msgs[:f.Limit]
		p.Next = msgs[f.Limit-1].ID
	}
	if p.Messages == nil {
		p.Messages = []domain.Message{}
	}
	return p, nil
}

// EventPage is one page of the events feed, oldest first. Next is the
// position to read on from: the last event's, or the one asked for when
// there is nothing newer yet.
type EventPage struct {
	Events []domain.FeedEvent
	Next   int64
}

// Events returns the scope's events after a feed position, in the order
// they were written: every status change and reply, whether or not the
// send asked for webhooks.
func (s *Service) Events(ctx context.Context, sc Scope, after int64, limit int) (EventPage, error) {
	evs, err := s.store.Feed(ctx, sc.AccountID, sc.Env, after, limit)
	if err != nil {
		return EventPage{}, err
	}
	p := EventPage{Events: evs, Next: after}
	if len(evs) > 0 {
		p.Next = evs[len(evs)-1].Pos
	}
	return p, nil
}
