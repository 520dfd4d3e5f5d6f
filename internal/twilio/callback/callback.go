// Package callback is the Twilio-compatible front's callbacks
// (notify.Posts): a status callback for every status step of a message
// created with a StatusCallback, and an inbound post for every reply to
// one of the account's numbers that has an SmsUrl. Each rides on the event
// the events feed keeps of its step or reply, written in the transaction
// that records it, with Twilio's form parameters beside the feed's body;
// the webhook worker posts them form-encoded and signed
// X-Twilio-Signature. One row per step serves the feed and the callback.
package callback

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/msgsvc/msgsvc/internal/api/notify"
	"github.com/msgsvc/msgsvc/internal/channel/sms"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/tracking"
	"github.com/msgsvc/msgsvc/internal/twilio/sid"
	"github.com/msgsvc/msgsvc/internal/twilio/vocab"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// Tx is what the callbacks need of the transaction that records a change
// or a reply: the events table (where notify writes them), and the
// account's numbers and account SIDs as they stand in it.
type Tx interface {
	notify.EventTx
	// TwilioNumber is what the front keeps of one of the account's
	// numbers; false when nothing.
	TwilioNumber(ctx context.Context, accountID, phone string) (domain.TwilioNumber, bool, error)
	// TwilioAccountSid is the account's oldest account SID in env; false
	// when it has none there.
	TwilioAccountSid(ctx context.Context, accountID string, env domain.Environment) (domain.TwilioCredential, bool, error)
}

// Callbacks makes the callbacks' form parameters.
type Callbacks struct {
	// OwnSender is the sender a provider's messages that name none go out
	// from; nil knows none. A callback of such a message says it as From.
	OwnSender func(provider string) string
}

var _ notify.Posts[Tx] = (*Callbacks)(nil)

// Status is the status callback of a step of a message that has a
// StatusCallback.
func (c *Callbacks) Status(m domain.Message, step domain.Status, at time.Time) (notify.Post, bool) {
	tw := m.Content.Twilio
	if tw == nil || tw.StatusCallback == "" {
		return notify.Post{}, false
	}
	return notify.Post{URL: tw.StatusCallback, Form: c.statusBody(m, step, at), Kind: domain.EventTwilioStatus}, true
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

// Reply is the inbound post of an SMS reply to one of the account's
// numbers that has an SmsUrl, signed with the account's account SID of
// the reply's environment (none when it has none there). When the
// provider did not say which number was written to (and for injected test
// replies), it is the sender of the message the reply answers.
func (c *Callbacks) Reply(ctx context.Context, tx Tx, r tracking.Reply) (notify.Post, bool, error) {
	in := r.Inbound
	if r.To == "" && r.Answers.AccountID == in.AccountID {
		r.To = r.Answers.From
	}
	if in.AccountID == "" || in.Channel != domain.SMS || r.To == "" {
		return notify.Post{}, false, nil
	}
	n, ok, err := tx.TwilioNumber(ctx, in.AccountID, r.To)
	if err != nil || !ok || n.SmsURL == "" {
		return notify.Post{}, false, err
	}
	ac, ok, err := tx.TwilioAccountSid(ctx, in.AccountID, in.Env)
	if err != nil || !ok {
		return notify.Post{}, false, err
	}
	msid := sid.FromNative(sid.Message, in.ID)
	segments := max(1, sms.Analyze(in.Body).Segments)
	f := url.Values{"MessageSid": {msid}, "SmsSid": {msid}, "SmsMessageSid": {msid}, "AccountSid": {ac.Sid},
		"From": {Number(in.Phone)}, "To": {Number(r.To)}, "Body": {in.Body}, "NumMedia": {"0"},
		"NumSegments": {strconv.Itoa(segments)}, "SmsStatus": {vocab.Received}, "ApiVersion": {vocab.APIVersion}}
	return notify.Post{URL: webhook.MethodURL(n.SmsMethod, n.SmsURL), Form: f.Encode(), Kind: domain.EventTwilioInbound}, true, nil
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
