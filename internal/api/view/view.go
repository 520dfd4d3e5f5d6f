// Package view holds the response shapes of the integration API: how a
// message, a campaign and a send's receipt look on the wire. The message
// service returns domain values; the API renders them with these.
package view

import (
	"encoding/json"
	"time"

	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/ledger"
)

// Time formats as the contract's UTC timestamp with milliseconds, and as
// null when zero.
type Time time.Time

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	tt := time.Time(t)
	if tt.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + domain.FormatTime(tt) + `"`), nil
}

// HistoryEntry is one step of a message's status history.
type HistoryEntry struct {
	Status    domain.Status `json:"status"`
	Timestamp Time          `json:"timestamp"`
}

// Message is a message as the status query shows it.
type Message struct {
	MessageID    string         `json:"messageId"`
	CampaignID   string         `json:"campaignId"`
	To           string         `json:"to"`
	From         *string        `json:"from"`
	Type         domain.Channel `json:"type"`
	Channel      domain.Channel `json:"channel"`
	Status       domain.Status  `json:"status"`
	Segments     int            `json:"segments"`
	Encoding     string         `json:"encoding"`
	Credits      float64        `json:"credits"`
	Provider     *string        `json:"provider"`
	ErrorCode    *string        `json:"errorCode"`
	ErrorMessage *string        `json:"errorMessage"`
	Reference    *string        `json:"reference"`
	ScheduledAt  *Time          `json:"scheduledAt,omitempty"`
	// DueAt is when a waiting message will be handed to a provider, when
	// that is later than its creation: its scheduled time, the end of the
	// recipient's quiet hours, or its next attempt after a provider's
	// temporary failure.
	DueAt     *Time          `json:"dueAt,omitempty"`
	Redacted  bool           `json:"redacted,omitempty"` // text erased and number hashed (retention)
	CreatedAt Time           `json:"createdAt"`
	UpdatedAt Time           `json:"updatedAt"`
	History   []HistoryEntry `json:"history"`
}

// StrOrNil is s, or null when empty.
func StrOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// OfMessage renders a message.
func OfMessage(m domain.Message) Message {
	v := Message{
		MessageID: m.ID, CampaignID: m.CampaignID, To: m.To, From: StrOrNil(m.From), Type: m.Type, Channel: m.Channel, Status: m.Status,
		Segments: m.Segments, Encoding: m.Encoding, Credits: ledger.Credits(m.Billed()), Provider: StrOrNil(m.Provider),
		ErrorCode: StrOrNil(m.ErrorCode), ErrorMessage: StrOrNil(m.ErrorMessage), Reference: StrOrNil(m.Reference),
		CreatedAt: Time(m.CreatedAt), UpdatedAt: Time(m.UpdatedAt),
	}
	for _, h := range m.History() {
		v.History = append(v.History, HistoryEntry{h.Status, Time(h.At)})
	}
	if !m.ScheduledAt.IsZero() {
		t := Time(m.ScheduledAt)
		v.ScheduledAt = &t
	}
	if m.Status == domain.Sending {
		v.DueAt = dueAt(m)
	}
	v.Redacted = compliance.Redacted(m.To)
	return v
}

// dueAt is when a message waits for, if later than its creation. A
// leased message is in a dispatcher's hands (its next attempt time is
// the lease's end): it waits for nothing.
func dueAt(m domain.Message) *Time {
	if m.LeaseOwner != "" || !m.NextAttemptAt.After(m.CreatedAt) {
		return nil
	}
	t := Time(m.NextAttemptAt)
	return &t
}

// Messages renders a list of messages.
func Messages(ms []domain.Message) []Message {
	out := make([]Message, len(ms))
	for i, m := range ms {
		out[i] = OfMessage(m)
	}
	return out
}

// Campaign is a campaign with its counts and one page of messages.
type Campaign struct {
	CampaignID string                `json:"campaignId"`
	Status     string                `json:"status"`
	Type       domain.Channel        `json:"type"`
	CreatedAt  Time                  `json:"createdAt"`
	Total      int                   `json:"total"`
	Counts     map[domain.Status]int `json:"counts"`
	Messages   []Message             `json:"messages"`
	NextCursor *string               `json:"nextCursor"`
}

// CampaignCancel is the answer to a campaign cancel.
type CampaignCancel struct {
	CampaignID string    `json:"campaignId"`
	Canceled   int       `json:"canceled"`
	Messages   []Message `json:"messages"`
}

// Sent is one message in a send response.
type Sent struct {
	MessageID *string       `json:"messageId"`
	To        string        `json:"to"`
	Status    domain.Status `json:"status"`
	Segments  int           `json:"segments"`
	Encoding  string        `json:"encoding"`
	Credits   float64       `json:"credits"`

	// Dry runs only. WhatsApp: whether the 24-hour window for free-form
	// messages is "open" or "closed", and whether the message would start a
	// new (charged) conversation. RCS, when the device's capability is known
	// from an earlier send: whether it takes RCS, and whether the message
	// would go out as SMS.
	ConversationWindow string `json:"conversationWindow,omitempty"`
	NewConversation    *bool  `json:"newConversation,omitempty"`
	RCSCapable         *bool  `json:"rcsCapable,omitempty"`
	Fallback           *bool  `json:"fallback,omitempty"`

	// DueAt is when the message goes, when not at once: its scheduled time
	// or the end of the recipient's quiet hours.
	DueAt *Time `json:"dueAt,omitempty"`
}

// SendResponse is the answer to a send.
type SendResponse struct {
	CampaignID *string       `json:"campaignId"`
	Status     domain.Status `json:"status"`
	Credits    float64       `json:"credits"`
	DryRun     bool          `json:"dryRun,omitempty"`
	Messages   []Sent        `json:"messages"`
}

// OfReceipt renders a send's receipt.
func OfReceipt(rc intake.Receipt) SendResponse {
	resp := SendResponse{Status: domain.Sending, DryRun: rc.DryRun, Credits: ledger.Credits(rc.Credits),
		Messages: make([]Sent, len(rc.Messages))}
	if !rc.DryRun {
		resp.CampaignID = StrOrNil(rc.Campaign.ID)
	}
	for i, p := range rc.Messages {
		m := p.Message
		resp.Messages[i] = Sent{MessageID: StrOrNil(m.ID), To: m.To, Status: m.Status, Segments: m.Segments,
			Encoding: m.Encoding, Credits: ledger.Credits(m.Credits), ConversationWindow: p.Window,
			NewConversation: p.NewConv, RCSCapable: p.RCSCapable, Fallback: p.Fallback, DueAt: dueAt(m)}
	}
	return resp
}

// ListedMessage is a message as a list shows it: the fields of the status
// query without the history (the shallower History field hides the
// embedded one and, nil, is left out).
type ListedMessage struct {
	Message
	History *struct{} `json:"history,omitempty"`
}

// Listed renders a page of listed messages.
func Listed(ms []domain.Message) []ListedMessage {
	out := make([]ListedMessage, len(ms))
	for i, m := range ms {
		out[i] = ListedMessage{Message: OfMessage(m)}
	}
	return out
}

// MessageList is a page of the message list.
type MessageList struct {
	Messages   []ListedMessage `json:"messages"`
	NextCursor *string         `json:"nextCursor"`
}

// Event is one event of the events feed: Data is the webhook body.
type Event struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt Time            `json:"createdAt"`
	Data      json.RawMessage `json:"data"`
}

// EventList is a page of the events feed. NextCursor is always given:
// passed back, it returns only newer events.
type EventList struct {
	Events     []Event `json:"events"`
	NextCursor string  `json:"nextCursor"`
}

// OptOut is one entry of the opt-out list.
type OptOut struct {
	Phone     string          `json:"phone"`
	Channel   *domain.Channel `json:"channel"` // null when an operator added it
	CreatedAt Time            `json:"createdAt"`
}

// OptOutPage is a page of the opt-out list.
type OptOutPage struct {
	OptOuts    []OptOut `json:"optOuts"`
	NextCursor *string  `json:"nextCursor"`
}

// OfOptOuts renders a page of opt-outs.
func OfOptOuts(p compliance.Page) OptOutPage {
	out := OptOutPage{OptOuts: make([]OptOut, len(p.OptOuts)), NextCursor: StrOrNil(p.Next)}
	for i, o := range p.OptOuts {
		out.OptOuts[i] = OptOut{Phone: o.Phone, CreatedAt: Time(o.CreatedAt)}
		if o.Channel != "" {
			ch := o.Channel
			out.OptOuts[i].Channel = &ch
		}
	}
	return out
}

// UsageReport is GET /usage.
type UsageReport struct {
	Usage    []UsageRow `json:"usage"`
	Currency string     `json:"currency"`
}

// UsageRow is one period's usage of one channel to one calling code.
type UsageRow struct {
	Period   string  `json:"period"`
	Channel  string  `json:"channel"`
	Country  string  `json:"country"`
	Messages int64   `json:"messages"`
	Segments int64   `json:"segments"`
	Credits  float64 `json:"credits"`
}

// Usage renders a usage report in the account's currency.
func Usage(rows []domain.UsageRow, currency string) UsageReport {
	out := UsageReport{Usage: make([]UsageRow, len(rows)), Currency: currency}
	for i, u := range rows {
		out.Usage[i] = UsageRow{Period: u.Period, Channel: string(u.Channel), Country: u.Country, Messages: u.Messages,
			Segments: u.Segments, Credits: ledger.Credits(u.Credits)}
	}
	return out
}
