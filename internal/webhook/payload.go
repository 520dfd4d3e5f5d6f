package webhook

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/jsontext"
)

// Event names of the webhooks (docs/api.md, webhooks).
const (
	DeliveryStatus  = "delivery_status"
	MessageReceived = "message_received"
)

// statusPayload is the delivery_status webhook, fields exactly as the seed
// lists them.
type statusPayload struct {
	Event        string        `json:"event"`
	CampaignID   string        `json:"campaignId"`
	MessageID    string        `json:"messageId"`
	Phone        string        `json:"phone"`
	Status       domain.Status `json:"status"`
	Timestamp    string        `json:"timestamp"`
	Provider     string        `json:"provider"`
	ErrorCode    *string       `json:"errorCode"`
	ErrorMessage *string       `json:"errorMessage"`
}

// StatusBody is the body of the delivery_status webhook telling that m
// reached status at a time. It is fixed when the event is written, so every
// retry sends the same bytes.
func StatusBody(m domain.Message, status domain.Status, at time.Time) string {
	p := statusPayload{Event: DeliveryStatus, CampaignID: m.CampaignID, MessageID: m.ID, Phone: m.To, Status: status,
		Timestamp: domain.FormatTime(at), Provider: m.Provider}
	if status == domain.Failed {
		p.ErrorCode, p.ErrorMessage = orNull(m.ErrorCode), orNull(m.ErrorMessage)
	}
	if body, ok := statusBodyFast(&p); ok {
		return body
	}
	return encode(p)
}

// statusBodyFast writes p as encoding/json does, byte for byte, when none
// of its texts needs escaping (printable ASCII without quotes, backslashes
// or the HTML characters json escapes); otherwise it declines. Every
// status change writes one or more of these bodies in the transaction that
// records it, and reflection cost more than the rest of making the event.
func statusBodyFast(p *statusPayload) (string, bool) {
	n := 160 + len(p.CampaignID) + len(p.MessageID) + len(p.Phone) + len(p.Status) + len(p.Timestamp) + len(p.Provider)
	b := make([]byte, 0, n)
	ok := true
	str := func(key, v string) {
		var plain bool
		b, plain = jsontext.AppendString(append(b, key...), v)
		ok = ok && plain
	}
	orNullStr := func(key string, v *string) {
		if v == nil {
			b = append(b, key...)
			b = append(b, "null"...)
			return
		}
		str(key, *v)
	}
	str(`{"event":`, p.Event)
	str(`,"campaignId":`, p.CampaignID)
	str(`,"messageId":`, p.MessageID)
	str(`,"phone":`, p.Phone)
	str(`,"status":`, string(p.Status))
	str(`,"timestamp":`, p.Timestamp)
	str(`,"provider":`, p.Provider)
	orNullStr(`,"errorCode":`, p.ErrorCode)
	orNullStr(`,"errorMessage":`, p.ErrorMessage)
	b = append(b, '}')
	if !ok {
		return "", false
	}
	return string(b), true
}

// replyPayload is the message_received webhook.
type replyPayload struct {
	Event      string         `json:"event"`
	CampaignID *string        `json:"campaignId"`
	Phone      string         `json:"phone"`
	Message    string         `json:"message"`
	ReceivedAt string         `json:"receivedAt"`
	Channel    domain.Channel `json:"channel"`
}

// ReplyBody is the body of the message_received webhook for a reply; an
// empty campaignID is null (a reply that matched no campaign).
func ReplyBody(campaignID, phone, text string, channel domain.Channel, at time.Time) string {
	return encode(replyPayload{Event: MessageReceived, CampaignID: orNull(campaignID), Phone: phone, Message: text,
		ReceivedAt: domain.FormatTime(at), Channel: channel})
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("webhook payload: " + err.Error()) // strings only: cannot fail
	}
	return string(b)
}

// RedactBody rewrites a stored webhook body for data retention: the phone
// number becomes what redact makes of it and a reply's text is erased; the
// other fields, and their order, stay as they were. A body of another
// shape is returned unchanged.
func RedactBody(body string, redact func(phone string) string) (string, error) {
	if body != "" && body[0] != '{' {
		return redactForm(body, redact)
	}
	var head struct {
		Event string `json:"event"`
	}
	if err := json.Unmarshal([]byte(body), &head); err != nil {
		return "", fmt.Errorf("redact webhook body: %w", err)
	}
	switch head.Event {
	case DeliveryStatus:
		var p statusPayload
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			return "", fmt.Errorf("redact webhook body: %w", err)
		}
		p.Phone = redact(p.Phone)
		return encode(p), nil
	case MessageReceived:
		var p replyPayload
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			return "", fmt.Errorf("redact webhook body: %w", err)
		}
		p.Phone, p.Message = redact(p.Phone), ""
		return encode(p), nil
	}
	return body, nil
}

// redactForm redacts the form parameters of a Twilio callback: the
// recipient's number (To of a status callback, From of an inbound post,
// hashed as msgsvc keeps numbers, without "+") and an inbound's text and
// media.
func redactForm(body string, redact func(phone string) string) (string, error) {
	f, err := url.ParseQuery(body)
	if err != nil {
		return "", fmt.Errorf("redact webhook body: %w", err)
	}
	who := "To"
	if _, inbound := f["SmsMessageSid"]; inbound {
		who = "From"
		f.Set("Body", "")
		for k := range f {
			if strings.HasPrefix(k, "MediaUrl") || strings.HasPrefix(k, "MediaContentType") {
				delete(f, k)
			}
		}
		if _, ok := f["NumMedia"]; ok {
			f.Set("NumMedia", "0")
		}
	}
	if v := f.Get(who); v != "" {
		f.Set(who, redact(strings.TrimPrefix(v, "+")))
	}
	return f.Encode(), nil
}

// alertPayload is an account's own event (balance.low, spend.daily).
type alertPayload struct {
	Event     string  `json:"event"`
	AccountID string  `json:"accountId"`
	Balance   float64 `json:"balance"`
	Threshold float64 `json:"threshold"`
	Currency  string  `json:"currency"`
	Timestamp string  `json:"timestamp"`
}

// AlertBody is the body of an account's alert: its balance and the
// threshold that was crossed, both in credits.
func AlertBody(event, accountID string, balance, threshold float64, currency string, at time.Time) string {
	return encode(alertPayload{Event: event, AccountID: accountID, Balance: balance, Threshold: threshold,
		Currency: currency, Timestamp: domain.FormatTime(at)})
}
