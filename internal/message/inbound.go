package message

import (
	"context"
	"errors"
	"fmt"
	"time"

	"msgsvc/internal/domain"
	"msgsvc/internal/id"
	"msgsvc/internal/provider"
	"msgsvc/internal/store"
	"msgsvc/internal/webhook"
)

// ReplyWindow is how far back a reply looks for the campaign it answers.
const ReplyWindow = 30 * 24 * time.Hour

// Inbound implements provider.Sink: it records a recipient's message and
// routes it to the callback of the most recent campaign sent to that
// number by the account.
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
	if err := t.owner(ctx, providerName, &in); err != nil {
		return "", err
	}
	rec := store.Inbound{ID: id.New(id.Inbound, now), AccountID: in.AccountID, Env: in.Env, Phone: in.From,
		Channel: in.Channel, Body: in.Body, Provider: providerName, ReceivedAt: in.At}
	var ev *store.Event
	last, err := t.store.LatestMessageTo(ctx, in.AccountID, in.Env, in.From, in.At.Add(-ReplyWindow))
	switch {
	case in.AccountID == "":
		// Unmatched: kept for operators, sent to nobody.
	case err == nil:
		rec.CampaignID = last.CampaignID
		if last.CallbackURL != "" {
			ev = &store.Event{ID: id.New(id.Event, now), AccountID: in.AccountID, CampaignID: last.CampaignID,
				Event: webhook.MessageReceived, URL: last.CallbackURL, NextAttemptAt: now, CreatedAt: now,
				Body: webhook.ReplyBody(last.CampaignID, in.From, in.Body, in.Channel, in.At)}
		}
	case !errors.Is(err, store.ErrNotFound):
		return "", fmt.Errorf("route reply: %w", err)
	}
	err = t.store.Write(ctx, func(tx Tx) error {
		if err := tx.InsertInbound(ctx, rec); err != nil {
			return err
		}
		if ev != nil {
			return tx.InsertEvents(ctx, []store.Event{*ev})
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if ev != nil {
		t.events()
	}
	return rec.CampaignID, nil
}

// owner finds the account and environment an inbound message belongs to
// (CONTRACT section 6): the account of the message it answers when the
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
	case !errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("route inbound: %w", err)
	}
	return nil
}
