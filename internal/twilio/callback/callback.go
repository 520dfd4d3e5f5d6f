// Package callback is the Twilio-compatible front's notifier
// (tracking.Notifier): a status callback for every status step of a
// message created with a StatusCallback, and an inbound post for every
// reply to one of the account's numbers that has an SmsUrl. Both are rows
// of the events table, written in the transaction that records the change
// or the reply, with Twilio's form parameters as their body; the webhook
// worker posts them form-encoded and signed X-Twilio-Signature. They are
// not part of the native events feed.
package callback

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/msgsvc/msgsvc/internal/channel/sms"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/lease"
	"github.com/msgsvc/msgsvc/internal/tracking"
	"github.com/msgsvc/msgsvc/internal/twilio/sid"
	"github.com/msgsvc/msgsvc/internal/twilio/vocab"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// Tx is what the callbacks need of the transaction that records a change
// or a reply: the events table, and the account's numbers and account SIDs
// as they stand in it.
type Tx interface {
	InsertEvents(ctx context.Context, evs []domain.Event) error
	// TwilioNumber is what the front keeps of one of the account's
	// numbers; false when nothing.
	TwilioNumber(ctx context.Context, accountID, phone string) (domain.TwilioNumber, bool, error)
	// TwilioAccountSid is the account's oldest account SID in env; false
	// when it has none there.
	TwilioAccountSid(ctx context.Context, accountID string, env domain.Environment) (domain.TwilioCredential, bool, error)
}

// Callbacks writes the events.
type Callbacks struct {
	// Handoff, when set, is this node's webhook worker: events are written
	// leased to it and handed to it after the commit, instead of waiting
	// for a claim.
	Handoff lease.Handoff[domain.Event]
	// Wake, when set, wakes the webhook worker after events it must claim
	// were written.
	Wake func()
	// OwnSender is the sender a provider's messages that name none go out
	// from; nil knows none. A callback of such a message says it as From.
	OwnSender func(provider string) string
}

var _ tracking.Notifier[Tx] = (*Callbacks)(nil)

// Changed writes a status callback for every step of the changes of
// messages that have a StatusCallback, in order.
func (c *Callbacks) Changed(ctx context.Context, tx Tx, cs []tracking.Change) (tracking.After, error) {
	var evs []domain.Event
	for _, ch := range cs {
		tw := ch.Message.Content.Twilio
		if tw == nil || tw.StatusCallback == "" {
			continue
		}
		for _, st := range ch.Steps {
			evs = append(evs, domain.Event{ID: id.New(id.Event, ch.At), AccountID: ch.Message.AccountID, Env: ch.Message.Env,
				CampaignID: ch.Message.CampaignID, MessageID: ch.Message.ID, Event: domain.EventTwilioStatus,
				URL: tw.StatusCallback, Body: c.statusBody(ch.Message, st, ch.At), NextAttemptAt: ch.At, CreatedAt: ch.At})
		}
	}
	if len(evs) == 0 {
		return nil, nil
	}
	return c.write(ctx, tx, evs, cs[0].Recorded)
}

// statusBody is the form of a status callback telling that m took step at
// a time, fixed when the event is written so every retry posts the same
// parameters.
func (c *Callbacks) statusBody(m domain.Message, step domain.Status, at time.Time) string {
	status := vocab.StepStatus(m, step, at)
	msid := sid.FromNative(sid.Message, m.ID)
	from := m.From
	if from == "" && c.OwnSender != nil {
		from = c.OwnSender(m.Provider)
	}
	f := url.Values{"MessageSid": {msid}, "SmsSid": {msid}, "AccountSid": {m.Content.Twilio.AccountSid},
		"From": {Number(from)}, "To": {Number(m.To)}, "MessageStatus": {status}, "SmsStatus": {status},
		"ApiVersion": {vocab.APIVersion}}
	if code := vocab.ErrorCodeText(m, status); code != "" {
		f.Set("ErrorCode", code)
	}
	return f.Encode()
}

// Received writes the inbound post of an SMS reply to one of the
// account's numbers that has an SmsUrl, signed with the account's account
// SID of the reply's environment (none when it has none there). When the
// provider did not say which number was written to (and for injected test
// replies), it is the sender of the message the reply answers.
func (c *Callbacks) Received(ctx context.Context, tx Tx, r tracking.Reply) (tracking.After, error) {
	in := r.Inbound
	if r.To == "" && r.Answers.AccountID == in.AccountID {
		r.To = r.Answers.From
	}
	if in.AccountID == "" || in.Channel != domain.SMS || r.To == "" {
		return nil, nil
	}
	n, ok, err := tx.TwilioNumber(ctx, in.AccountID, r.To)
	if err != nil || !ok || n.SmsURL == "" {
		return nil, err
	}
	ac, ok, err := tx.TwilioAccountSid(ctx, in.AccountID, in.Env)
	if err != nil || !ok {
		return nil, err
	}
	msid := sid.FromNative(sid.Message, in.ID)
	segments := max(1, sms.Analyze(in.Body).Segments)
	f := url.Values{"MessageSid": {msid}, "SmsSid": {msid}, "SmsMessageSid": {msid}, "AccountSid": {ac.Sid},
		"From": {Number(in.Phone)}, "To": {Number(r.To)}, "Body": {in.Body}, "NumMedia": {"0"},
		"NumSegments": {strconv.Itoa(segments)}, "SmsStatus": {vocab.Received}, "ApiVersion": {vocab.APIVersion}}
	ev := domain.Event{ID: id.New(id.Event, r.Recorded), AccountID: in.AccountID, Env: in.Env, CampaignID: in.CampaignID,
		Event: domain.EventTwilioInbound, URL: webhook.MethodURL(n.SmsMethod, n.SmsURL), Body: f.Encode(),
		NextAttemptAt: r.Recorded, CreatedAt: r.Recorded}
	return c.write(ctx, tx, []domain.Event{ev}, r.Recorded)
}

// write inserts evs, leased to the local worker when there is one, and
// says what to hand it after the commit.
func (c *Callbacks) write(ctx context.Context, tx Tx, evs []domain.Event, recorded time.Time) (tracking.After, error) {
	if c.Handoff != nil {
		owner, until := c.Handoff.Owner(), recorded.Add(c.Handoff.Lease())
		for i := range evs {
			evs[i].LeaseOwner, evs[i].NextAttemptAt = owner, until
		}
	}
	if err := tx.InsertEvents(ctx, evs); err != nil {
		return nil, err
	}
	return func(ctx context.Context) { c.deliver(ctx, evs) }, nil
}

// deliver hands the events still leased to the local worker and wakes it
// for those InsertEvents held behind an earlier event of their message:
// it claims them when their turn comes.
func (c *Callbacks) deliver(ctx context.Context, evs []domain.Event) {
	held := func(ev domain.Event) bool { return ev.LeaseOwner == "" }
	if c.Handoff == nil || slices.ContainsFunc(evs, held) {
		if c.Wake != nil {
			c.Wake()
		}
	}
	if c.Handoff == nil {
		return
	}
	if leased := slices.DeleteFunc(slices.Clone(evs), held); len(leased) > 0 {
		c.Handoff.Hand(ctx, leased)
	}
}

// Number is a number as Twilio writes it: an international number with
// its "+"; a short code or an alphanumeric sender as it is.
func Number(s string) string {
	if len(s) < 8 || s[0] == '0' {
		return s
	}
	if _, err := strconv.ParseUint(s, 10, 64); err != nil {
		return s
	}
	return "+" + s
}
