package tracking

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// InboundTx is what recording a recipient's message needs of a write
// transaction: the inbound row, and the opt-out list and its confirmation
// reply (a campaign of one message). What the fronts owe for the reply is
// their notifiers' part.
type InboundTx interface {
	InsertInbound(ctx context.Context, in domain.Inbound) error
	AddOptOut(ctx context.Context, o domain.OptOut) (bool, error)
	RemoveOptOut(ctx context.Context, accountID string, env domain.Environment, phone string) (bool, error)
	InsertCampaign(ctx context.Context, c domain.Campaign) error
	InsertMessages(ctx context.Context, msgs []domain.Message) error
	UsageTx
}

// ReplyWindow is how far back a reply looks for the campaign it answers.
const ReplyWindow = 30 * 24 * time.Hour

// Inbound implements provider.Sink: it records a recipient's message,
// matched to the most recent campaign sent to that number by the account,
// and hands it to the fronts' notifiers (the campaign's callback, the
// account's SMPP binds). A stop or start word also changes the account's
// opt-out list, in the same transaction, so the reply and the change to
// the list are recorded together or not at all: every
// provider's inbound path comes through here.
func (t *Tracker) Inbound(ctx context.Context, providerName string, in provider.Inbound) error {
	_, err := t.Receive(ctx, providerName, in)
	return err
}

// Receive is Inbound that also tells which campaign the reply was matched to.
func (t *Tracker) Receive(ctx context.Context, providerName string, in provider.Inbound) (string, error) {
	now := t.now().UTC()
	if in.At.IsZero() {
		in.At = now
	}
	// Adapters read addresses through phone.Address already (SMPP with its
	// types of number); reading them again here keeps a path that forgot
	// from matching the "+" or "00" form of a number to the wrong account.
	in.From, in.To = phone.Address(in.From), phone.Address(in.To)
	if err := t.owner(ctx, providerName, &in); err != nil {
		return "", err
	}
	rec := domain.Inbound{ID: id.New(id.Inbound, now), AccountID: in.AccountID, Env: in.Env, Phone: in.From,
		Channel: in.Channel, Body: in.Body, Provider: providerName, ReceivedAt: in.At, ProviderRef: in.Ref}
	last, err := t.store.LatestMessageTo(ctx, in.AccountID, in.Env, in.From, in.At.Add(-ReplyWindow))
	switch {
	case in.AccountID == "":
		// No account: kept for operators, sent to nobody.
	case err == nil:
		rec.CampaignID = last.CampaignID
	case !errors.Is(err, domain.ErrNotFound):
		return "", fmt.Errorf("route reply: %w", err)
	}
	if rec.CampaignID == "" {
		last = domain.Message{}
	}
	rec.MessageID = last.ID
	optOut, err := t.optOutFor(ctx, providerName, in, now)
	if err != nil {
		return "", err
	}
	var after []After
	dup := false
	err = t.w.Write(ctx, func(w Work) error {
		after = after[:0]
		err := w.InsertInbound(ctx, rec)
		// Delivered again by the provider: recorded and announced the first time.
		if dup = errors.Is(err, domain.ErrConflict); dup {
			return nil
		}
		if err != nil {
			return err
		}
		if err := optOut.record(ctx, w); err != nil {
			return err
		}
		if in.AccountID == "" {
			return nil
		}
		after, err = w.received(ctx, Reply{Inbound: rec, To: in.To, At: in.At, Answers: last, Recorded: now})
		return err
	})
	if err != nil {
		return "", err
	}
	for _, f := range after {
		f(ctx)
	}
	if optOut != nil && optOut.confirm != nil && !dup {
		t.due()
	}
	return rec.CampaignID, nil
}

// owner finds the account and environment an inbound message belongs to:
// the account of the message it answers when the
// provider threads replies; else the account that has the receiving
// number or agent as an approved sender; else the account that last sent
// to that phone through that provider in the last 30 days. Provider
// traffic is live. Otherwise AccountID stays empty: the message is kept
// as unmatched.
func (t *Tracker) owner(ctx context.Context, providerName string, in *provider.Inbound) error {
	switch {
	case in.ReplyTo != "":
		orig, err := t.store.MessageByID(ctx, in.ReplyTo)
		if err != nil {
			return fmt.Errorf("reply to %s: %w", in.ReplyTo, err)
		}
		in.AccountID, in.Env = orig.AccountID, orig.Env
		return nil
	case in.AccountID != "":
		return nil
	}
	in.Env = domain.Live
	if in.To != "" {
		owners, err := t.store.SenderOwners(ctx, in.Channel, in.To)
		if err != nil {
			return fmt.Errorf("route inbound: %w", err)
		}
		if len(owners) == 1 {
			in.AccountID = owners[0]
			return nil
		}
	}
	last, err := t.store.LatestMessageVia(ctx, providerName, in.From, in.At.Add(-ReplyWindow))
	switch {
	case err == nil:
		in.AccountID = last.AccountID
	case !errors.Is(err, domain.ErrNotFound):
		return fmt.Errorf("route inbound: %w", err)
	}
	return nil
}
