// Package notify is the REST front's notifier (tracking.Notifier): for
// every status step of a message a delivery_status event, and for every
// reply a message_received event, written in the transaction that records
// them. Every event is kept for the events feed; those of a send with a
// callbackUrl are webhooks, which the webhook worker delivers. A front
// that posts its own callbacks (the Twilio-compatible API) has them ride
// on the same events (Posts): one row per step or reply, whichever front
// the message came through.
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

// Webhooks writes the events. T is the change's transaction as the events
// and Posts see it.
type Webhooks[T EventTx] struct {
	// Handoff, when set, is this node's webhook worker: status events are
	// written leased to it and handed to it after the commit, instead of
	// waiting for a claim.
	Handoff lease.Handoff[domain.Event]
	// Wake, when set, wakes the webhook worker after events it must claim
	// were written.
	Wake func()
	// Held, when set, is told of the status events written to wait in
	// the table behind an earlier event of their message, in the
	// transaction that writes them: before that event's outcome can be
	// recorded, which is when the worker looks for them.
	Held func(evs []domain.Event)
	// Posts, when set, is a front's own callbacks: a step or a reply it
	// has one for is posted as that callback by the event the feed keeps
	// of it, rather than by an event of its own.
	Posts Posts[T]
}

// Posts is a front that posts its own form of steps and replies to its
// clients' receivers, instead of msgsvc's JSON webhooks.
type Posts[T any] interface {
	// Status is the post of a step m took at a time; false when none.
	Status(m domain.Message, step domain.Status, at time.Time) (Post, bool)
	// Reply is the post of a reply, read in the transaction that records
	// it; false when none.
	Reply(ctx context.Context, tx T, r tracking.Reply) (Post, bool, error)
}

// Post is one callback of a front: where it goes and what it says.
type Post struct {
	// URL is its receiver (as the event keeps it: webhook.MethodURL).
	URL string
	// Form is its parameters, encoded (domain.Event.Form).
	Form string
	// Kind is the kind of the event that carries it alone, with Form as
	// its body, when the feed's event of the step or reply is already a
	// msgsvc webhook (a message or campaign with a callbackUrl) and cannot
	// be posted twice.
	Kind string
}

var _ tracking.Notifier[EventTx] = (*Webhooks[EventTx])(nil)

// Changed writes the delivery_status events of the steps of cs, in order.
func (w *Webhooks[T]) Changed(ctx context.Context, tx T, cs []tracking.Change) (tracking.After, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	lease := w.lease(cs[0])
	evs := make([]domain.Event, 0, len(cs)+len(cs)/2) // most changes are one step
	for _, c := range cs {
		first := len(evs)
		evs = w.appendStatusEvents(evs, c.Message, c.Steps, c.At, lease)
		if c.FirstSteps() {
			// No earlier event of the message to wait behind: the
			// events table need not be read for one.
			for i := first; i < len(evs); i++ {
				evs[i].NoEarlier = true
			}
		}
	}
	if err := tx.InsertEvents(ctx, evs); err != nil {
		return nil, err
	}
	if w.Held != nil && lease.owner != "" {
		w.Held(held(evs))
	}
	return func(ctx context.Context) { w.deliver(ctx, evs, lease) }, nil
}

// Received writes the message_received event of a reply: a webhook when it
// answers a campaign sent with a callbackUrl, else the front's post of it
// when Posts has one.
func (w *Webhooks[T]) Received(ctx context.Context, tx T, r tracking.Reply) (tracking.After, error) {
	in, now := r.Inbound, r.Recorded
	ev := domain.Event{ID: id.New(id.Event, now), AccountID: in.AccountID, Env: in.Env, CampaignID: in.CampaignID,
		Event: webhook.MessageReceived, NextAttemptAt: now, CreatedAt: now,
		Body: webhook.ReplyBody(in.CampaignID, in.Phone, in.Body, in.Channel, r.At)}
	if in.CampaignID != "" {
		ev.URL = r.Answers.CallbackURL
	}
	evs := []domain.Event{ev}
	if w.Posts != nil {
		p, ok, err := w.Posts.Reply(ctx, tx, r)
		if err != nil {
			return nil, err
		}
		if ok {
			evs = withPost(evs, p, now)
		}
	}
	if err := tx.InsertEvents(ctx, evs); err != nil {
		return nil, err
	}
	if len(deliverable(evs)) == 0 || w.Wake == nil {
		return nil, nil
	}
	return func(context.Context) { w.Wake() }, nil
}

// withPost has the last event of evs, the feed's event of a step or a
// reply, carry a front's post of it: as its form when it goes to no msgsvc
// webhook, else as an event of its own after it.
func withPost(evs []domain.Event, p Post, at time.Time) []domain.Event {
	ev := &evs[len(evs)-1]
	if ev.URL == "" {
		ev.URL, ev.Form = p.URL, p.Form
		return evs
	}
	own := *ev
	own.ID, own.Event, own.URL, own.Body, own.NextAttemptAt, own.LeaseOwner = id.New(id.Event, at), p.Kind, p.URL, p.Form, at, ""
	return append(evs, own)
}

// eventLease is how new events are written: unleased (zero) or leased to
// a local deliverer.
type eventLease struct {
	owner string
	until time.Time
}

// lease is how the events of a batch of changes are leased: to the local
// deliverer when there is one, from when the batch was recorded.
func (w *Webhooks[T]) lease(c tracking.Change) eventLease {
	if w.Handoff == nil {
		return eventLease{}
	}
	return eventLease{owner: w.Handoff.Owner(), until: c.Recorded.Add(w.Handoff.Lease())}
}

// appendStatusEvents appends the delivery_status events of the steps a
// message took to out. Every one is written, for the events feed; only
// those of a send with a callbackUrl, or that carry their front's post,
// are webhooks to deliver.
func (w *Webhooks[T]) appendStatusEvents(out []domain.Event, m *domain.Message, steps []domain.Status, at time.Time, lease eventLease) []domain.Event {
	first := len(out)
	for _, st := range steps {
		out = append(out, domain.Event{ID: id.New(id.Event, at), AccountID: m.AccountID, Env: m.Env, CampaignID: m.CampaignID,
			MessageID: m.ID, Event: webhook.DeliveryStatus, URL: m.CallbackURL, Body: webhook.StatusBody(*m, st, at),
			NextAttemptAt: at, CreatedAt: at})
		if w.Posts != nil {
			if p, ok := w.Posts.Status(*m, st, at); ok {
				out = withPost(out, p, at)
			}
		}
	}
	if lease.owner != "" {
		for i := first; i < len(out); i++ {
			if ev := &out[i]; ev.URL != "" {
				ev.LeaseOwner, ev.NextAttemptAt = lease.owner, lease.until
			}
		}
	}
	return out
}

// deliver gets newly written events going: in memory when they were
// leased to the local deliverer, else by waking it. An event written
// without the lease waits in the table for an earlier event of its
// message (InsertEvents took the lease off): the deliverer claims it when
// its turn comes. A leased event behind another of its message goes
// behind it (lined).
func (w *Webhooks[T]) deliver(ctx context.Context, evs []domain.Event, lease eventLease) {
	evs = deliverable(evs)
	if len(evs) == 0 {
		return
	}
	if lease.owner == "" {
		w.wake()
		return
	}
	leased := evs
	if slices.ContainsFunc(evs, unleased) {
		leased = slices.DeleteFunc(slices.Clone(evs), unleased)
		w.wake()
	}
	w.Handoff.Hand(ctx, lined(leased))
}

// unleased tells a webhook written to wait in the table from one
// written leased to the local deliverer.
func unleased(ev domain.Event) bool { return ev.LeaseOwner == "" }

// held returns the webhooks of evs, written leased to the local
// deliverer, that InsertEvents left to wait in the table (nil when none,
// as most are).
func held(evs []domain.Event) []domain.Event {
	var out []domain.Event
	for _, ev := range evs {
		if ev.URL != "" && unleased(ev) {
			out = append(out, ev)
		}
	}
	return out
}

// lined hands each message's events over as one: those behind its first
// event in evs ride in that event's Then, so that one poster takes them
// in their order. A message's SENT and DELIVERED often come in one batch
// (an SMSC's receipt right behind its answer); behind the first, the
// second would otherwise wait in the table for a claim.
func lined(evs []domain.Event) []domain.Event {
	if len(evs) < 2 {
		return evs
	}
	at := make(map[string]int, len(evs)) // a message's first event in out
	var out []domain.Event               // nil while no event was lined up
	for i, ev := range evs {
		l, seen := at[ev.MessageID]
		switch {
		case ev.MessageID == "" || !seen:
			if out == nil {
				at[ev.MessageID] = i
			} else {
				at[ev.MessageID] = len(out)
				out = append(out, ev)
			}
		default:
			if out == nil {
				out = append(make([]domain.Event, 0, len(evs)-1), evs[:i]...)
			}
			out[l].Then = append(out[l].Then, ev)
		}
	}
	if out == nil {
		return evs
	}
	return out
}

func (w *Webhooks[T]) wake() {
	if w.Wake != nil {
		w.Wake()
	}
}

// deliverable keeps the events that are webhooks to deliver (their send
// had a callbackUrl, or they carry a front's post); the others exist for
// the events feed only.
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
