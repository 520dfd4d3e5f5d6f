package manage

import (
	"context"
	"errors"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/user"
)

// SenderStore is what managing an account's senders needs from storage.
type SenderStore interface {
	Senders(ctx context.Context, accountID string) ([]domain.Sender, error)
	AddSender(ctx context.Context, in domain.Sender) error
	RemoveSender(ctx context.Context, accountID, id string) error
}

// SenderDecisionStore is what operators' decisions on sender requests need
// from storage.
type SenderDecisionStore interface {
	Sender(ctx context.Context, id string) (domain.Sender, error)
	PendingSenders(ctx context.Context) ([]domain.Sender, error)
	DecideSender(ctx context.Context, d domain.Sender) (domain.Sender, error)
	// SenderOwners lists the accounts that hold a value as an approved
	// sender of a channel (at most one).
	SenderOwners(ctx context.Context, channel domain.Channel, value string) ([]string, error)
}

// ErrSenderTaken: the value is approved for another account on that
// channel. It names neither the account nor anything of it.
var ErrSenderTaken = domain.ErrSenderTaken

// Senders lists an account's senders whatever their state, by channel,
// then value; an operator who names no account gets every account's
// pending requests, oldest first.
func (s *Service) Senders(ctx context.Context, a Actor, accountID string) ([]domain.Sender, error) {
	if a.Operator() && accountID == "" {
		list, err := s.st.PendingSenders(ctx)
		return nonNil(list), err
	}
	acct, err := s.account(ctx, a, accountID, user.Viewer)
	if err != nil {
		return nil, err
	}
	list, err := s.st.Senders(ctx, acct.ID)
	return nonNil(list), err
}

// NewSender is a sender an account asks for.
type NewSender struct {
	Channel string
	Value   string
	Default bool
}

// AddSender asks for a sender ID, number or agent on a channel: an
// account's admin gets a PENDING request that an operator decides, an
// operator (or the console) approves it at once. A value another account
// holds is ErrSenderTaken either way: it cannot be approved, so it is not
// worth asking for. As the default it replaces the channel's previous
// default once approved.
func (s *Service) AddSender(ctx context.Context, a Actor, accountID string, in NewSender) (domain.Sender, error) {
	acct, err := s.account(ctx, a, accountID, user.Admin)
	if err != nil {
		return domain.Sender{}, err
	}
	var p problems
	ch, err := domain.ParseChannel(in.Channel)
	if err != nil || strings.TrimSpace(in.Channel) != in.Channel {
		p.add("channel", "must be SMS, WHATSAPP or RCS")
	} else if msg := domain.RequestedSenderProblem(ch, in.Value); msg != "" {
		p.add("value", msg)
	}
	if err := p.err("The sender is not valid."); err != nil {
		return domain.Sender{}, err
	}
	now := s.now().UTC()
	sd := domain.Sender{ID: id.New(id.Sender, now), AccountID: acct.ID, Channel: ch, Value: in.Value, Default: in.Default,
		Status: domain.SenderPending, RequestedBy: a.Email, CreatedAt: now}
	if a.Operator() {
		sd.Status, sd.DecidedBy, sd.DecidedAt = domain.SenderApproved, a.Email, now
	}
	if err := s.st.AddSender(ctx, sd); err != nil {
		switch {
		case errors.Is(err, domain.ErrSenderTaken):
			return sd, ErrSenderTaken
		case errors.Is(err, domain.ErrConflict):
			return sd, invalid("value", "is already a "+string(ch)+" sender of this account (approved, pending or rejected)")
		}
		return sd, err
	}
	return sd, nil
}

// ApproveSender approves a pending sender request (operators only): the
// account may name it in sends, and inbound messages to it are its own,
// from its next request on every node.
func (s *Service) ApproveSender(ctx context.Context, a Actor, senderID string) (domain.Sender, error) {
	if err := operator(a); err != nil {
		return domain.Sender{}, err
	}
	return s.decideSender(ctx, domain.Sender{ID: senderID, Status: domain.SenderApproved, DecidedBy: a.Email})
}

// RejectSender turns a pending sender request down with a reason the
// account sees (operators only).
func (s *Service) RejectSender(ctx context.Context, a Actor, senderID, reason string) (domain.Sender, error) {
	if err := operator(a); err != nil {
		return domain.Sender{}, err
	}
	reason = strings.TrimSpace(reason)
	if msg := textProblem(reason, 2000); reason == "" || msg != "" {
		return domain.Sender{}, invalid("reason", nonEmpty(msg, "is required: the account sees it"))
	}
	return s.decideSender(ctx, domain.Sender{ID: senderID, Status: domain.SenderRejected, Reason: reason, DecidedBy: a.Email})
}

func (s *Service) decideSender(ctx context.Context, d domain.Sender) (domain.Sender, error) {
	d.DecidedAt = s.now().UTC()
	out, err := s.st.DecideSender(ctx, d)
	switch {
	case errors.Is(err, domain.ErrSenderTaken):
		return out, ErrSenderTaken
	case errors.Is(err, domain.ErrSenderDecided):
		return out, invalid("id", "names a sender that was already decided")
	}
	return out, err
}

// RemoveSender withdraws a sender or a request for one.
func (s *Service) RemoveSender(ctx context.Context, a Actor, accountID, senderID string) error {
	acct, err := s.account(ctx, a, accountID, user.Admin)
	if err != nil {
		return err
	}
	return s.st.RemoveSender(ctx, acct.ID, senderID)
}
