// Package notify is the REST front's notifier (tracking.Notifier): for
// every status step of a message a delivery_status event, and for every
// reply a message_received event, written in the transaction that records
// them. Every event is kept for the events feed; those of a send with a
// callbackUrl are webhooks, which the webhook worker delivers.
package notify

import (
	"context"
	"slices"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/lease"
	"github.com/msgsvc/msgsvc/internal/tracking"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// EventTx is what the events need of the change's transaction.
type EventTx interface {
	InsertEvents(ctx context.Context, evs []domain.Event) error
}

// Webhooks writes the events.
type Webhooks struct {
	// Handoff, when set, is this node's webhook worker: status events are
	// written leased to it and handed to it after the commit, instead of
	// waiting for a claim.
	Handoff lease.Handoff[domain.Event]
	// Wake, when set, wakes the webhook worker after events it must claim
	// were written.
	Wake func()
}

var _ tracking.Notifier[EventTx] = (*Webhooks)(nil)

// Changed writes the delivery_status events of the steps of cs, in order.
func (w *Webhooks) Changed(ctx context.Context, tx EventTx, cs []tracking.Change) (tracking.After, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	lease := w.lease(cs[0])
	evs := make([]domain.Event, 0, len(cs)+len(cs)/2) // most changes are one step
	for _, c := range cs {
		evs = appendStatusEvents(evs, c.Message, c.Steps, c.At, lease)
	}
	if err := tx.InsertEvents(ctx, evs); err != nil {
		return nil, err
	}
	return func(ctx context.Context) { w.deliver(ctx, evs, lease) }, nil
}

// Received writes the message_received event of a reply: a webhook when it
// answers a campaign sent with a callbackUrl.
func (w *Webhooks) Received(ctx context.Context, tx EventTx, r tracking.Reply) (tracking.After, error) {
	in, now := r.Inbound, r.Recorded
	ev := domain.Event{ID: id.New(id.Event, now), AccountID: in.AccountID, Env: in.Env, CampaignID: in.CampaignID,
		Event: webhook.MessageReceived, NextAttemptAt: now, CreatedAt: now,
		Body: webhook.ReplyBody(in.CampaignID, in.Phone, in.Body, in.Channel, r.At)}
	if in.CampaignID != "" {
		ev.URL = r.Answers.CallbackURL
	}
	if err := tx.InsertEvents(ctx, []domain.Event{ev}); err != nil {
		return nil, err
	}
	if ev.URL == "" || w.Wake == nil {
		return nil, nil
	}
	return func(context.Context) { w.Wake() }, nil
}

// eventLease is how new events are written: unleased (zero) or leased to
// a local deliverer.
type eventLease struct {
	owner string
	until time.Time
}

// lease is how the events of a batch of changes are leased: to the local
// deliverer when there is one, from when the batch was recorded.
func (w *Webhooks) lease(c tracking.Change) eventLease {
	if w.Handoff == nil {
		return eventLease{}
	}
	return eventLease{owner: w.Handoff.Owner(), until: c.Recorded.Add(w.Handoff.Lease())}
}

// appendStatusEvents appends the delivery_status events of the steps a
// message took to out. Every one is written, for the events feed; only
// those of a send with a callbackUrl are webhooks to deliver.
func appendStatusEvents(out []domain.Event, m domain.Message, steps []domain.Status, at time.Time, lease eventLease) []domain.Event {
	for _, st := range steps {
		ev := domain.Event{ID: id.New(id.Event, at), AccountID: m.AccountID, Env: m.Env, CampaignID: m.CampaignID, MessageID: m.ID,
			Event: webhook.DeliveryStatus, URL: m.CallbackURL, Body: webhook.StatusBody(m, st, at), NextAttemptAt: at,
			CreatedAt: at}
		if lease.owner != "" && m.CallbackURL != "" {
			ev.LeaseOwner, ev.NextAttemptAt = lease.owner, lease.until
		}
		out = append(out, ev)
	}
	return out
}

// deliver gets newly written events going: in memory when they were
// leased to the local deliverer, else by waking it. An event written
// without the lease waits in the table for an earlier event of its
// message (InsertEvents took the lease off): the deliverer claims it when
// its turn comes.
func (w *Webhooks) deliver(ctx context.Context, evs []domain.Event, lease eventLease) {
	evs = deliverable(evs)
	if len(evs) == 0 {
		return
	}
	if lease.owner == "" {
		w.wake()
		return
	}
	held := func(ev domain.Event) bool { return ev.LeaseOwner == "" }
	leased := evs
	if slices.ContainsFunc(evs, held) {
		leased = slices.DeleteFunc(slices.Clone(evs), held)
		w.wake()
	}
	w.Handoff.Hand(ctx, leased)
}

func (w *Webhooks) wake() {
	if w.Wake != nil {
		w.Wake()
	}
}

// deliverable keeps the events that are webhooks to deliver (their send
// had a callbackUrl); the others exist for the events feed only.
func deliverable(evs []domain.Event) []domain.Event {
	i := 0
	for i < len(evs) && evs[i].URL != "" {
		i++
	}
	if i == len(evs) {
		return evs // the usual case, every event a webhook: no copy
	}
	out := make([]domain.Event, i, len(evs)-1)
	copy(out, evs[:i])
	for _, ev := range evs[i+1:] {
		if ev.URL != "" {
			out = append(out, ev)
		}
	}
	return out
}
