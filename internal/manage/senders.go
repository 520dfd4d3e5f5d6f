package manage

import (
	"context"
	"errors"
	"strings"

	"msgsvc/internal/domain"
	"msgsvc/internal/id"
	"msgsvc/internal/user"
)

// SenderStore is what managing approved senders needs from storage.
type SenderStore interface {
	Senders(ctx context.Context, accountID string) ([]domain.Sender, error)
	AddSender(ctx context.Context, in domain.Sender) error
	RemoveSender(ctx context.Context, accountID, id string) error
}

// Senders lists an account's approved senders by channel, then value.
func (s *Service) Senders(ctx context.Context, a Actor, accountID string) ([]domain.Sender, error) {
	acct, err := s.account(ctx, a, accountID, user.Viewer)
	if err != nil {
		return nil, err
	}
	list, err := s.st.Senders(ctx, acct.ID)
	return nonNil(list), err
}

// NewSender is a sender to approve.
type NewSender struct {
	Channel string
	Value   string
	Default bool
}

// AddSender approves a sender ID or number for a channel; as the default it
// replaces the channel's previous default.
func (s *Service) AddSender(ctx context.Context, a Actor, accountID string, in NewSender) (domain.Sender, error) {
	acct, err := s.account(ctx, a, accountID, user.Admin)
	if err != nil {
		return domain.Sender{}, err
	}
	var p problems
	ch, err := domain.ParseChannel(in.Channel)
	if err != nil || strings.TrimSpace(in.Channel) != in.Channel {
		p.add("channel", "must be SMS, WHATSAPP or RCS")
	} else if msg := domain.SenderProblem(ch, in.Value); msg != "" {
		p.add("value", msg)
	}
	if err := p.err("The sender is not valid."); err != nil {
		return domain.Sender{}, err
	}
	now := s.now().UTC()
	sd := domain.Sender{ID: id.New(id.Sender, now), AccountID: acct.ID, Channel: ch, Value: in.Value, Default: in.Default, CreatedAt: now}
	if err := s.st.AddSender(ctx, sd); err != nil {
		if errors.Is(err, domain.ErrConflict) {
			return sd, invalid("value", "is already an approved "+string(ch)+" sender of this account")
		}
		return sd, err
	}
	return sd, nil
}

// RemoveSender withdraws an approved sender.
func (s *Service) RemoveSender(ctx context.Context, a Actor, accountID, senderID string) error {
	acct, err := s.account(ctx, a, accountID, user.Admin)
	if err != nil {
		return err
	}
	return s.st.RemoveSender(ctx, acct.ID, senderID)
}
