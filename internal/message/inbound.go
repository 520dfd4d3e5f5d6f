package message

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/msgsvc/msgsvc/internal/dlr"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// InboundTx is what recording a recipient's message needs of a write
// transaction: the inbound row, the opt-out list and its confirmation reply
// (a campaign of one message), and the webhook event.
type InboundTx interface {
	InsertInbound(ctx context.Context, in domain.Inbound) error
	AddOptOut(ctx context.Context, o domain.OptOut) (bool, error)
	RemoveOptOut(ctx context.Context, accountID string, env domain.Environment, phone string) (bool, error)
	InsertCampaign(ctx context.Context, c domain.Campaign) error
	InsertMessages(ctx context.Context, msgs []domain.Message) error
	UsageTx
	InsertEvents(ctx context.Context, evs []domain.Event) error
	InsertSMPPItems(ctx context.Context, items []domain.SMPPItem) error
}

// ReplyWindow is how far back a reply looks for the campaign it answers.
const ReplyWindow = 30 * 24 * time.Hour

// Inbound implements provider.Sink: it records a recipient's message and
// routes it to the callback of the most recent campaign sent to that
// number by the account. A stop or start word also changes the account's
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
	var ev *domain.Event
	last, err := t.store.LatestMessageTo(ctx, in.AccountID, in.Env, in.From, in.At.Add(-ReplyWindow))
	switch {
	case in.AccountID == "":
		// No account: kept for operators, sent to nobody.
	case err == nil:
		rec.CampaignID = last.CampaignID
	case !errors.Is(err, domain.ErrNotFound):
		return "", fmt.Errorf("route reply: %w", err)
	}
	dup := false
	if in.AccountID != "" {
		// Every reply of an account is an event of its feed; it is a
		// webhook only when it answers a campaign sent with a callbackUrl.
		ev = &domain.Event{ID: id.New(id.Event, now), AccountID: in.AccountID, Env: in.Env, CampaignID: rec.CampaignID,
			Event: webhook.MessageReceived, NextAttemptAt: now, CreatedAt: now,
			Body: webhook.ReplyBody(rec.CampaignID, in.From, in.Body, in.Channel, in.At)}
		if rec.CampaignID != "" {
			ev.URL = last.CallbackURL
		}
	}
	optOut, err := t.optOutFor(ctx, providerName, in, now)
	if err != nil {
		return "", err
	}
	smppReply, err := t.smppReply(ctx, in, rec, last, now)
	if err != nil {
		return "", err
	}
	err = t.store.Write(ctx, func(tx Tx) error {
		err := tx.InsertInbound(ctx, rec)
		// Delivered again by the provider: recorded and announced the first time.
		if dup = errors.Is(err, domain.ErrConflict); dup {
			return nil
		}
		if err != nil {
			return err
		}
		if err := optOut.record(ctx, tx); err != nil {
			return err
		}
		if smppReply != nil {
			if err := tx.InsertSMPPItems(ctx, []domain.SMPPItem{*smppReply}); err != nil {
				return err
			}
		}
		if ev != nil {
			return tx.InsertEvents(ctx, []domain.Event{*ev})
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if ev != nil && ev.URL != "" && !dup {
		t.events()
	}
	if optOut != nil && optOut.confirm != nil && !dup {
		t.due()
	}
	if smppReply != nil && !dup {
		t.smpp()
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

// smppReply is the deliver_sm an SMS reply owes the account's SMPP binds:
// those of the SMPP user that sent the message it answers, else any
// receiving bind of the account in its environment (UserID ""). Nil when
// the account has no SMPP user there.
func (t *Tracker) smppReply(ctx context.Context, in provider.Inbound, rec domain.Inbound, last domain.Message,
	now time.Time) (*domain.SMPPItem, error) {
	if in.AccountID == "" || in.Channel != domain.SMS {
		return nil, nil
	}
	user := ""
	if last.AccountID == in.AccountID && last.Content.SMPP != nil {
		user = last.Content.SMPP.User
	} else {
		has, err := t.store.HasSMPPUsers(ctx, in.AccountID, in.Env)
		if err != nil || !has {
			return nil, err
		}
	}
	dest := in.To
	if dest == "" {
		dest = last.From
	}
	return &domain.SMPPItem{ID: id.New(id.SMPPItem, now), UserID: user, AccountID: in.AccountID, Env: in.Env,
		MessageID: rec.ID, Source: in.From, Dest: dest, Text: in.Body, CreatedAt: now, ExpiresAt: now.Add(dlr.Keep),
		NextAttemptAt: now}, nil
}
