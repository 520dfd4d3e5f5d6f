package message

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"msgsvc/internal/batch"
	"msgsvc/internal/id"
	"msgsvc/internal/provider"
	"msgsvc/internal/store"
)

// Kind tells what a report says about a message.
type Kind int

const (
	// Accepted: a provider took the message (it becomes SENT).
	Accepted Kind = iota
	// Progress: a provider's delivery report (SENT, DELIVERED, READ, FAILED).
	Progress
	// Retry: handing over failed for now; try again at RetryAt.
	Retry
	// Rejected: handing over failed for good, before any provider took it.
	Rejected
	// Expire: the validity ran out.
	Expire
	// Cancel: the integrator canceled it.
	Cancel
	// Fallback: the device cannot take RCS; the message goes out as SMS
	// through Provider (its SMS route), at the SMS price.
	Fallback
)

// Report is one thing that happened to a message.
type Report struct {
	Kind         Kind
	MessageID    string
	Provider     string
	Ref          string // the provider's id; finds the message when MessageID is empty
	Status       string // for Progress
	ErrorCode    string
	ErrorMessage string
	At           time.Time
	RetryAt      time.Time
	LeaseOwner   string // for Accepted/Retry/Rejected: only the lease holder's word counts
}

// Tracker applies reports to messages: it moves statuses forward only,
// writes the webhook events of every change and the refunds, all in the
// same transaction, so no change can be recorded without its event.
// Concurrent reports are grouped into one transaction.
type Tracker struct {
	store   TrackerStore
	reports *batch.Batcher[[]Report, struct{}]
	now     func() time.Time
	events  func() // called after events were written
	handoff *Handoff
}

// TrackerStore is what the Tracker needs from storage.
type TrackerStore interface {
	Write(ctx context.Context, fn func(tx *store.Tx) error) error
	LatestMessageTo(ctx context.Context, accountID, env, phone string, since time.Time) (store.Message, error)
	Message(ctx context.Context, accountID, messageID string) (store.Message, error)
	MessageByID(ctx context.Context, messageID string) (store.Message, error)
}

// TrackerConfig sets up a Tracker.
type TrackerConfig struct {
	Store TrackerStore
	Now   func() time.Time
	// Events is called after webhook events were queued (wakes the deliverer).
	Events func()
	// Workers is the number of parallel transaction loops.
	Workers int
	// Handoff, when set, gives the status events straight to a webhook
	// worker of this node instead of through a database claim.
	Handoff *Handoff
}

// Handoff passes new webhook events to a local deliverer in memory. The
// events are written already leased to Owner for Lease, so no other node
// takes them while this one delivers them; if this node dies, the lease
// runs out and any node claims them from the database.
type Handoff struct {
	Owner string
	Lease time.Duration
	// Enqueue takes the events it has room for, in order, and returns how
	// many; the rest are released to the database queue at once.
	Enqueue func(evs []store.Event) int
	Release func(ctx context.Context, owner string, ids []string, now time.Time) error
}

// eventLease is how new events are written: unleased (zero) or leased to
// a local deliverer.
type eventLease struct {
	owner string
	until time.Time
}

// NewTracker starts a Tracker; Close stops it.
func NewTracker(c TrackerConfig) *Tracker {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Events == nil {
		c.Events = func() {}
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	t := &Tracker{store: c.Store, now: c.Now, events: c.Events, handoff: c.Handoff}
	t.reports = batch.New(t.apply, 64, c.Workers)
	return t
}

// Close waits for running transactions.
func (t *Tracker) Close() { t.reports.Close() }

// Apply stores reports and returns once they are committed.
func (t *Tracker) Apply(ctx context.Context, reports []Report) error {
	if len(reports) == 0 {
		return nil
	}
	_, err := t.reports.Do(ctx, reports)
	return err
}

// Statuses implements provider.Sink.
func (t *Tracker) Statuses(ctx context.Context, providerName string, sts []provider.Status) error {
	reports := make([]Report, len(sts))
	for i, st := range sts {
		reports[i] = Report{Kind: Progress, MessageID: st.MessageID, Provider: providerName, Ref: st.Ref, Status: st.Status,
			ErrorCode: st.ErrorCode, ErrorMessage: st.ErrorMessage, At: st.At}
	}
	return t.Apply(ctx, reports)
}

func (t *Tracker) apply(ctx context.Context, groups [][]Report) ([]struct{}, error) {
	var all []Report
	for _, g := range groups {
		all = append(all, g...)
	}
	var queued []store.Event
	now := t.now().UTC()
	var lease eventLease
	if t.handoff != nil {
		lease = eventLease{owner: t.handoff.Owner, until: now.Add(t.handoff.Lease)}
	}
	err := t.store.Write(ctx, func(tx *store.Tx) error {
		var err error
		queued, err = applyReports(ctx, tx, all, now, lease)
		return err
	})
	if err != nil {
		return nil, err
	}
	t.deliver(ctx, queued, lease)
	return make([]struct{}, len(groups)), nil
}

// deliver gets newly written events going: in memory when they were
// leased to the local deliverer, else by waking it.
func (t *Tracker) deliver(ctx context.Context, evs []store.Event, lease eventLease) {
	if len(evs) == 0 {
		return
	}
	if lease.owner == "" {
		t.events()
		return
	}
	n := t.handoff.Enqueue(evs)
	if n == len(evs) {
		return
	}
	rest := make([]string, 0, len(evs)-n)
	for _, ev := range evs[n:] {
		rest = append(rest, ev.ID)
	}
	// The deliverer is saturated: hand the rest to the database queue now
	// rather than when their lease runs out.
	if err := t.handoff.Release(context.WithoutCancel(ctx), lease.owner, rest, t.now()); err != nil {
		return // they are delivered when the lease runs out
	}
	t.events()
}

// applyReports applies reports inside tx and returns the webhook events it
// queued, written under lease (when one is given).
func applyReports(ctx context.Context, tx *store.Tx, reports []Report, now time.Time, lease eventLease) ([]store.Event, error) {
	// Reports that name only the provider's reference are resolved first.
	byRef := map[string][]string{}
	for _, r := range reports {
		if r.MessageID == "" && r.Ref != "" {
			byRef[r.Provider] = append(byRef[r.Provider], r.Ref)
		}
	}
	refs := map[string]map[string]string{}
	for p, rs := range byRef {
		m, err := tx.MessageIDsByProviderRef(ctx, p, rs)
		if err != nil {
			return nil, err
		}
		refs[p] = m
	}
	ids := make([]string, 0, len(reports))
	for i := range reports {
		if reports[i].MessageID == "" {
			reports[i].MessageID = refs[reports[i].Provider][reports[i].Ref]
		}
		if reports[i].MessageID != "" {
			ids = append(ids, reports[i].MessageID)
		}
	}
	msgs, err := tx.LockMessages(ctx, ids)
	if err != nil {
		return nil, err
	}
	changed := map[string]bool{}
	var events []store.Event
	for _, r := range reports {
		m, ok := msgs[r.MessageID]
		if !ok {
			continue // unknown reference: a late report for a purged message
		}
		at := r.At
		if at.IsZero() {
			at = now
		}
		steps, refund := transition(&m, r, at)
		if len(steps) == 0 && !refund.requeued {
			continue
		}
		if refund.amount > 0 {
			if err := tx.Refund(ctx, m.AccountID, m.CampaignID, m.ID, refund.amount, refund.note); err != nil {
				return nil, err
			}
		}
		msgs[m.ID] = m
		changed[m.ID] = true
		if m.CallbackURL != "" {
			for _, st := range steps {
				ev := statusEvent(m, st, at)
				if lease.owner != "" {
					ev.LeaseOwner, ev.NextAttemptAt = lease.owner, lease.until
				}
				events = append(events, ev)
			}
		}
	}
	updates := make([]store.Message, 0, len(changed))
	for mid := range changed {
		updates = append(updates, msgs[mid])
	}
	if err := tx.UpdateMessages(ctx, updates); err != nil {
		return nil, err
	}
	if err := tx.InsertEvents(ctx, events); err != nil {
		return nil, err
	}
	return events, nil
}

type money struct {
	amount   int64
	note     string
	requeued bool
}

// transition applies one report to a message in memory and returns the
// statuses it passed through and any refund. It is the only place where a
// message's status changes.
func transition(m *store.Message, r Report, at time.Time) ([]string, money) {
	owned := r.LeaseOwner == "" || r.LeaseOwner == m.LeaseOwner
	switch r.Kind {
	case Accepted:
		if !owned || m.Status != Sending {
			return nil, money{}
		}
		m.Provider, m.ProviderRef = r.Provider, r.Ref
		m.NextAttemptAt, m.LeaseOwner = time.Time{}, ""
		refund := settle(m)
		stamp(m, Sent, at)
		return []string{Sent}, refund
	case Retry:
		if !owned || m.Status != Sending {
			return nil, money{}
		}
		m.NextAttemptAt, m.LeaseOwner, m.UpdatedAt = r.RetryAt, "", at
		m.ErrorCode, m.ErrorMessage = r.ErrorCode, r.ErrorMessage // last error, shown while retrying
		return nil, money{requeued: true}
	case Rejected:
		if !owned {
			return nil, money{}
		}
		if r.Provider != "" {
			m.Provider = r.Provider
		}
		return fail(m, r.ErrorCode, r.ErrorMessage, at)
	case Expire:
		return fail(m, CodeExpired, "the message was not delivered within its validity period", at)
	case Fallback:
		if !owned || m.Status != Sending || m.Channel != RCS {
			return nil, money{}
		}
		plan, ok := fallbackOf(*m)
		if !ok {
			return fail(m, CodeRCSNotSupported, "", at)
		}
		// Queued again, due at once, as an SMS: the dispatcher hands it to
		// the SMS route on its next claim.
		m.Channel, m.Segments, m.Encoding = SMS, plan.Segments, plan.Encoding
		m.Provider, m.ProviderRef, m.ErrorCode, m.ErrorMessage = r.Provider, "", "", ""
		m.NextAttemptAt, m.LeaseOwner, m.Attempts, m.UpdatedAt = at, "", 0, at
		refund := lower(m, plan.SMSCredits, "the device does not support RCS: sent as SMS, difference to the SMS price refunded")
		refund.requeued = true
		return nil, refund
	case Cancel:
		if m.Status != Sending {
			return nil, money{}
		}
		refund := money{amount: m.Charged, note: "canceled"}
		m.Charged = 0
		m.NextAttemptAt, m.LeaseOwner = time.Time{}, ""
		stamp(m, Canceled, at)
		return []string{Canceled}, refund
	}
	// Progress from a provider.
	if r.Status == Failed {
		return fail(m, r.ErrorCode, r.ErrorMessage, at)
	}
	steps := path(m.Status, r.Status)
	if len(steps) == 0 {
		return nil, money{}
	}
	var refund money
	if m.Status == Sending {
		// A report can overtake the submission's own answer.
		m.NextAttemptAt, m.LeaseOwner = time.Time{}, ""
		if r.Ref != "" {
			m.ProviderRef = r.Ref
		}
		refund = settle(m)
	}
	for _, st := range steps {
		stamp(m, st, at)
	}
	return steps, refund
}

// settle brings an RCS message's reserve for an SMS fallback down to the
// RCS price once a provider took it as RCS.
func settle(m *store.Message) money {
	if m.Channel != RCS {
		return money{}
	}
	plan, ok := fallbackOf(*m)
	if !ok {
		return money{}
	}
	return lower(m, plan.RCSCredits, "sent as RCS: the reserve for an SMS fallback refunded")
}

// lower sets the price of a message to the channel actually used and
// returns the refund of what was charged beyond it.
func lower(m *store.Message, price int64, note string) money {
	m.Credits = price
	if m.Charged <= price {
		return money{}
	}
	refund := money{amount: m.Charged - price, note: note}
	m.Charged = price
	return refund
}

// fail ends a message in FAILED. Credits come back when no provider ever
// took the message (CONTRACT section 4).
func fail(m *store.Message, code, text string, at time.Time) ([]string, money) {
	if len(path(m.Status, Failed)) == 0 {
		return nil, money{}
	}
	var refund money
	if m.Status == Sending {
		refund = money{amount: m.Charged, note: "failed before a provider accepted it: " + code}
		m.Charged = 0
	}
	if code == "" {
		code = CodeProviderError
	}
	if text == "" {
		text = defaultErrorText(code)
	}
	m.ErrorCode, m.ErrorMessage = code, text
	m.NextAttemptAt, m.LeaseOwner = time.Time{}, ""
	stamp(m, Failed, at)
	return []string{Failed}, refund
}

func defaultErrorText(code string) string {
	switch code {
	case CodeInvalidNumber:
		return "the recipient number does not exist or cannot receive messages"
	case CodeRCSNotSupported:
		return "the recipient's device does not support RCS"
	case CodeExpired:
		return "the message was not delivered within its validity period"
	case CodeNoRoute:
		return "no provider is configured for this channel and destination"
	}
	return "the provider could not deliver the message"
}

// statusPayload is the delivery_status webhook, fields exactly as the seed
// lists them.
type statusPayload struct {
	Event        string  `json:"event"`
	CampaignID   string  `json:"campaignId"`
	MessageID    string  `json:"messageId"`
	Phone        string  `json:"phone"`
	Status       string  `json:"status"`
	Timestamp    string  `json:"timestamp"`
	Provider     string  `json:"provider"`
	ErrorCode    *string `json:"errorCode"`
	ErrorMessage *string `json:"errorMessage"`
}

func statusEvent(m store.Message, status string, at time.Time) store.Event {
	p := statusPayload{Event: "delivery_status", CampaignID: m.CampaignID, MessageID: m.ID, Phone: m.To, Status: status,
		Timestamp: Format(at), Provider: m.Provider}
	if status == Failed {
		p.ErrorCode, p.ErrorMessage = strOrNil(m.ErrorCode), strOrNil(m.ErrorMessage)
	}
	body, _ := json.Marshal(p) // a struct of strings always encodes
	return store.Event{ID: id.New(id.Event, at), AccountID: m.AccountID, CampaignID: m.CampaignID, MessageID: m.ID,
		Event: "delivery_status", URL: m.CallbackURL, Body: string(body), NextAttemptAt: at, CreatedAt: at}
}

// replyPayload is the message_received webhook.
type replyPayload struct {
	Event      string  `json:"event"`
	CampaignID *string `json:"campaignId"`
	Phone      string  `json:"phone"`
	Message    string  `json:"message"`
	ReceivedAt string  `json:"receivedAt"`
	Channel    string  `json:"channel"`
}

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
	if in.ReplyTo != "" {
		orig, err := t.store.MessageByID(ctx, in.ReplyTo)
		if err != nil {
			return "", fmt.Errorf("reply to %s: %w", in.ReplyTo, err)
		}
		in.AccountID, in.Env = orig.AccountID, orig.Env
	}
	rec := store.Inbound{ID: id.New(id.Inbound, now), AccountID: in.AccountID, Env: in.Env, Phone: in.From,
		Channel: in.Channel, Body: in.Body, Provider: providerName, ReceivedAt: in.At}
	var ev *store.Event
	last, err := t.store.LatestMessageTo(ctx, in.AccountID, in.Env, in.From, in.At.Add(-ReplyWindow))
	switch {
	case err == nil:
		rec.CampaignID = last.CampaignID
		if last.CallbackURL != "" {
			cid := last.CampaignID
			body, _ := json.Marshal(replyPayload{Event: "message_received", CampaignID: &cid, Phone: in.From,
				Message: in.Body, ReceivedAt: Format(in.At), Channel: in.Channel})
			ev = &store.Event{ID: id.New(id.Event, now), AccountID: in.AccountID, CampaignID: cid,
				Event: "message_received", URL: last.CallbackURL, Body: string(body), NextAttemptAt: now, CreatedAt: now}
		}
	case err != store.ErrNotFound:
		return "", fmt.Errorf("route reply: %w", err)
	}
	err = t.store.Write(ctx, func(tx *store.Tx) error {
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
