package manage

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/user"
)

// MessageStore is what searching messages and redelivering their events needs from storage.
type MessageStore interface {
	SearchMessages(ctx context.Context, f domain.MessageFilter) ([]domain.Message, error)
	MessageByID(ctx context.Context, messageID string) (domain.Message, error)
	EventsForMessage(ctx context.Context, accountID, messageID string) ([]domain.Event, error)
	MessageAttempts(ctx context.Context, accountID, messageID string) ([]domain.Attempt, error)
	AccountEvent(ctx context.Context, accountID, eventID string) (domain.Event, error)
	Redeliver(ctx context.Context, accountID, eventID string, now time.Time) error
}

// MessageQuery is a search of an account's messages as a client wrote it:
// the filters of the integration API's message list, plus the environment
// (both when empty). Every field is optional.
type MessageQuery struct {
	Status, To, CampaignID, Reference string
	CreatedFrom, CreatedTo            string // RFC 3339
	Environment                       string // test or live
	Limit                             string // 1 to 1000, default 100
	Cursor                            string // nextCursor of the previous page
}

// MessagePage is one page of a search, newest first; Next is the cursor of
// the following page ("" on the last).
type MessagePage struct {
	Messages []domain.Message
	Next     string
}

// SearchMessages finds an account's messages.
func (s *Service) SearchMessages(ctx context.Context, a Actor, accountID string, q MessageQuery) (MessagePage, error) {
	acct, below, err := s.reach(ctx, a, accountID, user.Viewer)
	if err != nil {
		return MessagePage{}, err
	}
	f, err := q.filter()
	if err != nil {
		return MessagePage{}, err
	}
	f.AccountID = acct.ID
	limit := f.Limit
	f.Limit++
	msgs, err := s.st.SearchMessages(ctx, f)
	if err != nil {
		return MessagePage{}, err
	}
	if below {
		for i := range msgs {
			hideText(&msgs[i])
		}
	}
	page := MessagePage{Messages: nonNil(msgs)}
	if len(msgs) > limit {
		page.Messages = msgs[:limit]
		page.Next = base64.RawURLEncoding.EncodeToString([]byte(msgs[limit-1].ID))
	}
	return page, nil
}

// filter checks a query and turns it into the store's filter.
func (q MessageQuery) filter() (domain.MessageFilter, error) {
	var p problems
	f := domain.MessageFilter{Limit: 100}
	if q.Status != "" {
		st, err := domain.ParseStatus(strings.ToUpper(q.Status))
		if err != nil {
			p.add("status", "must be one of SENDING, SENT, DELIVERED, READ, FAILED, CANCELED")
		}
		f.Status = st
	}
	if q.To != "" {
		if strings.Trim(q.To, "0123456789") != "" || len(q.To) > 15 {
			p.add("to", "must be digits only, country code first")
		}
		f.Phone = q.To
	}
	f.CampaignID, f.Reference = q.CampaignID, q.Reference
	var err error
	if f.From, err = optTime(q.CreatedFrom); err != nil {
		p.add("createdFrom", "must be an RFC 3339 time, e.g. 2026-11-21T00:00:00Z")
	}
	if f.To, err = optTime(q.CreatedTo); err != nil {
		p.add("createdTo", "must be an RFC 3339 time, e.g. 2026-11-22T00:00:00Z")
	}
	if q.Environment != "" {
		env, err := domain.ParseEnvironment(q.Environment)
		if err != nil {
			p.add("environment", "must be test or live")
		}
		f.Env = env
	}
	if q.Limit != "" {
		n, err := strconv.Atoi(q.Limit)
		if err != nil || n < 1 || n > 1000 {
			p.add("limit", "must be a whole number from 1 to 1000")
		}
		f.Limit = n
	}
	if q.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		if err != nil || !strings.HasPrefix(string(b), "msg_") {
			p.add("cursor", "is not a cursor this API returned")
		}
		f.Before = string(b)
	}
	return f, p.err("The search is not valid.")
}

func optTime(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339, v)
}

// MessageDetail is one message with its webhook events and every delivery
// attempt of each.
type MessageDetail struct {
	Message domain.Message
	Events  []EventAttempts
	// Replies are the recipient's messages that answer it, oldest first.
	Replies []domain.Inbound
}

// EventAttempts is one webhook event and its attempts, oldest first.
type EventAttempts struct {
	Event    domain.Event
	Attempts []domain.Attempt
}

// Message reads one message of an account, in either environment.
func (s *Service) Message(ctx context.Context, a Actor, accountID, messageID string) (MessageDetail, error) {
	acct, below, err := s.reach(ctx, a, accountID, user.Viewer)
	if err != nil {
		return MessageDetail{}, err
	}
	m, err := s.accountMessage(ctx, acct.ID, messageID)
	if err != nil {
		return MessageDetail{}, err
	}
	if below {
		hideText(&m)
	}
	evs, err := s.st.EventsForMessage(ctx, acct.ID, m.ID)
	if err != nil {
		return MessageDetail{}, err
	}
	atts, err := s.st.MessageAttempts(ctx, acct.ID, m.ID)
	if err != nil {
		return MessageDetail{}, err
	}
	byEvent := map[string][]domain.Attempt{}
	for _, at := range atts {
		byEvent[at.EventID] = append(byEvent[at.EventID], at)
	}
	replies, err := s.st.RepliesTo(ctx, m, repliesShown)
	if err != nil {
		return MessageDetail{}, err
	}
	if below {
		for i := range replies {
			replies[i].Body = ""
		}
	}
	out := MessageDetail{Message: m, Replies: replies}
	for _, ev := range evs {
		out.Events = append(out.Events, EventAttempts{Event: ev, Attempts: byEvent[ev.ID]})
	}
	return out, nil
}

// accountMessage reads a message if it is the account's; another
// account's id is not found.
func (s *Service) accountMessage(ctx context.Context, accountID, messageID string) (domain.Message, error) {
	m, err := s.st.MessageByID(ctx, messageID)
	if err == nil && m.AccountID != accountID {
		err = ErrNotFound
	}
	return m, err
}

// Attempts lists the delivery attempts of a message's webhooks, oldest
// first.
func (s *Service) Attempts(ctx context.Context, a Actor, accountID, messageID string) ([]domain.Attempt, error) {
	acct, _, err := s.reach(ctx, a, accountID, user.Viewer)
	if err != nil {
		return nil, err
	}
	if _, err := s.accountMessage(ctx, acct.ID, messageID); err != nil {
		return nil, err
	}
	list, err := s.st.MessageAttempts(ctx, acct.ID, messageID)
	return nonNil(list), err
}

// Redeliver queues a webhook event again, whatever happened to it before;
// the receiver gets the same webhook-id and body.
func (s *Service) Redeliver(ctx context.Context, a Actor, accountID, eventID string) error {
	acct, err := s.account(ctx, a, accountID, user.Developer)
	if err != nil {
		return err
	}
	ev, err := s.st.AccountEvent(ctx, acct.ID, eventID)
	if err != nil {
		return err
	}
	if ev.URL == "" {
		return invalid("id", "names an event of a send without a callbackUrl: there is nowhere to deliver it")
	}
	if err := s.st.Redeliver(ctx, acct.ID, ev.ID, s.now().UTC()); err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return ErrNotFound
		}
		return err
	}
	s.redelivered()
	return nil
}
