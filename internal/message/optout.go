package message

import (
	"context"
	"fmt"

	"time"

	"github.com/msgsvc/msgsvc/internal/channel/sms"
	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// optOutChange is what an inbound message does to the opt-out list, worked
// out before its transaction: the change, and the confirmation to send back.
type optOutChange struct {
	action  compliance.Action
	optOut  domain.OptOut
	confirm *confirmation
}

// confirmation is the reply an account sends to a stop or start word: a
// real message on the channel the word came on, not charged (the rules
// that ask for it leave the account no choice).
type confirmation struct {
	campaign domain.Campaign
	message  domain.Message
}

// optOutFor reads a stop or start word of a matched inbound message
// (unmatched messages belong to no account, so no list changes).
func (t *Tracker) optOutFor(ctx context.Context, providerName string, in provider.Inbound, now time.Time) (*optOutChange, error) {
	action := compliance.Classify(in.Body)
	if action == compliance.None || in.AccountID == "" {
		return nil, nil
	}
	c := &optOutChange{action: action, optOut: domain.OptOut{AccountID: in.AccountID, Env: in.Env, Phone: in.From,
		Channel: in.Channel, Source: domain.OptOutReply, CreatedAt: now}}
	a, err := t.store.Account(ctx, in.AccountID)
	if err != nil {
		return nil, fmt.Errorf("opt-out of %s: %w", in.AccountID, err)
	}
	text := a.Compliance.OptOutReply
	if action == compliance.OptIn {
		text = a.Compliance.OptInReply
	}
	if text != "" {
		c.confirm = confirmationOf(a, providerName, in, text, action.String()+" confirmation", now)
	}
	return c, nil
}

// confirmationOf builds the confirmation message: from the number or agent
// the word was sent to when it is one of the account's senders, else the
// account's default sender of the channel. It is due at once (quiet hours
// do not hold an answer to the recipient's own message).
func confirmationOf(a domain.Account, providerName string, in provider.Inbound, text, reference string, now time.Time) *confirmation {
	n, err := phone.Parse(in.From)
	if err != nil {
		return nil // not a number a message can go to (an operator's test, a short code)
	}
	from := a.Senders[in.Channel].Default
	for _, v := range a.Senders[in.Channel].Values {
		if v == in.To {
			from = v
		}
	}
	cmp := domain.Campaign{ID: id.New(id.Campaign, now), AccountID: a.ID, Env: in.Env, Type: in.Channel, Total: 1, CreatedAt: now}
	m := domain.Message{ID: id.New(id.Message, now), CampaignID: cmp.ID, AccountID: a.ID, Env: in.Env, To: n.Digits,
		CountryCode: n.CountryCode, From: from, Type: in.Channel, Channel: in.Channel, Body: text, Status: domain.Sending,
		Segments: 1, Encoding: "UTF-8", Provider: providerName, Reference: reference, CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(intake.MaxValidity), NextAttemptAt: now}
	if in.Channel == domain.SMS {
		an := sms.Analyze(text)
		m.Encoding, m.Segments = string(an.Encoding), an.Segments
	}
	return &confirmation{campaign: cmp, message: m}
}

// record applies the change in the inbound message's transaction.
func (c *optOutChange) record(ctx context.Context, tx InboundTx) error {
	if c == nil {
		return nil
	}
	var err error
	if c.action == compliance.OptOut {
		_, err = tx.AddOptOut(ctx, c.optOut)
	} else {
		_, err = tx.RemoveOptOut(ctx, c.optOut.AccountID, c.optOut.Env, c.optOut.Phone)
	}
	if err != nil || c.confirm == nil {
		return err
	}
	if err := tx.InsertCampaign(ctx, c.confirm.campaign); err != nil {
		return err
	}
	return insertCounted(ctx, tx, []domain.Message{c.confirm.message})
}
