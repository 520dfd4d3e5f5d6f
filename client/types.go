package client

import (
	"encoding/json"
	"fmt"
	"time"
)

// Channels (SendRequest.Type, Message.Channel).
const (
	SMS      = "SMS"
	WhatsApp = "WHATSAPP"
	RCS      = "RCS"
)

// Message statuses. SENDING → SENT → DELIVERED → READ is the progress;
// FAILED and CANCELED end a message early. HELD comes before SENDING, for
// a message the fraud guard holds until an operator decides.
const (
	StatusHeld      = "HELD"
	StatusSending   = "SENDING"
	StatusSent      = "SENT"
	StatusDelivered = "DELIVERED"
	StatusRead      = "READ"
	StatusFailed    = "FAILED"
	StatusCanceled  = "CANCELED"
)

// Final reports whether a status ends a message's story for the
// integrator. DELIVERED counts although a READ may still follow on
// WhatsApp and RCS.
func Final(status string) bool {
	switch status {
	case StatusDelivered, StatusRead, StatusFailed, StatusCanceled:
		return true
	}
	return false
}

// SendRequest is a send: one recipient (To) or a batch (Recipients).
// Optional fields left zero are not sent.
type SendRequest struct {
	To          string       `json:"to,omitempty"`
	Recipients  []string     `json:"recipients,omitempty"`
	Message     string       `json:"message,omitempty"`
	From        string       `json:"from,omitempty"`
	Type        string       `json:"type"`
	CallbackURL string       `json:"callbackUrl,omitempty"`
	Media       *MediaRef    `json:"media,omitempty"`
	Buttons     []Button     `json:"buttons,omitempty"`
	List        *List        `json:"list,omitempty"`
	Cards       []Card       `json:"cards,omitempty"`
	Template    *TemplateRef `json:"template,omitempty"`
	Fallback    *Fallback    `json:"fallback,omitempty"`
	ScheduledAt *time.Time   `json:"scheduledAt,omitempty"`
	// Validity is in seconds (60 to 259200; default 72 hours).
	Validity  int    `json:"validity,omitempty"`
	Reference string `json:"reference,omitempty"`
	// IdempotencyKey, when empty, is made up by the client; set it to
	// make a send safe to repeat across restarts of your program.
	IdempotencyKey string `json:"-"`
}

// MediaRef names media by an upload's id or by an https URL.
type MediaRef struct {
	MediaID string `json:"mediaId,omitempty"`
	URL     string `json:"url,omitempty"`
}

// Button is a reply, URL or call button.
type Button struct {
	Type    string `json:"type"` // reply, url or call
	Title   string `json:"title"`
	Payload string `json:"payload,omitempty"`
	URL     string `json:"url,omitempty"`
	Phone   string `json:"phone,omitempty"`
}

// List is a WhatsApp list message.
type List struct {
	Button   string        `json:"button"`
	Sections []ListSection `json:"sections"`
}

// ListSection is one section of a List.
type ListSection struct {
	Title string    `json:"title"`
	Rows  []ListRow `json:"rows"`
}

// ListRow is one choice of a List.
type ListRow struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

// Card is an RCS rich card.
type Card struct {
	Title       string    `json:"title,omitempty"`
	Description string    `json:"description,omitempty"`
	Media       *MediaRef `json:"media,omitempty"`
	Buttons     []Button  `json:"buttons,omitempty"`
}

// TemplateRef sends a WhatsApp template.
type TemplateRef struct {
	Name       string   `json:"name"`
	Language   string   `json:"language"`
	Parameters []string `json:"parameters,omitempty"`
}

// Fallback asks for an SMS when an RCS device cannot take RCS.
type Fallback struct {
	Type    string `json:"type"` // SMS
	Message string `json:"message,omitempty"`
}

// SendResponse is the answer to a send (or a dry run).
type SendResponse struct {
	CampaignID string            `json:"campaignId"`
	Status     string            `json:"status"`
	Credits    float64           `json:"credits"`
	DryRun     bool              `json:"dryRun"`
	Messages   []AcceptedMessage `json:"messages"`
	// Replayed is true when the answer is the one remembered for the
	// request's Idempotency-Key: nothing was sent again.
	Replayed bool `json:"-"`
}

// AcceptedMessage is one message of a send.
type AcceptedMessage struct {
	MessageID string  `json:"messageId"`
	To        string  `json:"to"`
	Status    string  `json:"status"`
	Segments  int     `json:"segments"`
	Encoding  string  `json:"encoding"`
	Credits   float64 `json:"credits"`
	// Dry runs only.
	ConversationWindow string `json:"conversationWindow,omitempty"`
	NewConversation    *bool  `json:"newConversation,omitempty"`
	RCSCapable         *bool  `json:"rcsCapable,omitempty"`
	Fallback           *bool  `json:"fallback,omitempty"`
}

// Message is a message as the status query shows it. Fields the API
// answers with null are empty; History is empty in lists.
type Message struct {
	MessageID    string    `json:"messageId"`
	CampaignID   string    `json:"campaignId"`
	To           string    `json:"to"`
	From         string    `json:"from"`
	Type         string    `json:"type"`
	Channel      string    `json:"channel"`
	Status       string    `json:"status"`
	Segments     int       `json:"segments"`
	Encoding     string    `json:"encoding"`
	Credits      float64   `json:"credits"`
	Provider     string    `json:"provider"`
	ErrorCode    string    `json:"errorCode"`
	ErrorMessage string    `json:"errorMessage"`
	Reference    string    `json:"reference"`
	ScheduledAt  time.Time `json:"scheduledAt"`
	// DueAt is when a message held by the account's quiet hours goes.
	DueAt time.Time `json:"dueAt"`
	// Redacted tells that the message's text is erased and To is a keyed
	// hash ("redacted:…").
	Redacted  bool           `json:"redacted"`
	CreatedAt time.Time      `json:"createdAt"`
	UpdatedAt time.Time      `json:"updatedAt"`
	History   []StatusChange `json:"history"`
}

// StatusChange is one step of a message's history.
type StatusChange struct {
	Status    string    `json:"status"`
	Timestamp time.Time `json:"timestamp"`
}

// Campaign is a campaign with one page of its messages.
type Campaign struct {
	CampaignID string         `json:"campaignId"`
	Status     string         `json:"status"`
	Type       string         `json:"type"`
	CreatedAt  time.Time      `json:"createdAt"`
	Total      int            `json:"total"`
	Counts     map[string]int `json:"counts"`
	Messages   []Message      `json:"messages"`
	NextCursor string         `json:"nextCursor"`
}

// CampaignCancel is what a campaign cancel canceled.
type CampaignCancel struct {
	CampaignID string    `json:"campaignId"`
	Canceled   int       `json:"canceled"`
	Messages   []Message `json:"messages"`
}

// ListOptions filter and page the message list; zero fields do not
// filter. Cursor is a page's NextCursor.
type ListOptions struct {
	Status      string
	To          string
	CampaignID  string
	Reference   string
	CreatedFrom time.Time
	CreatedTo   time.Time
	Limit       int
	Cursor      string
}

// MessagePage is one page of the message list, newest first.
type MessagePage struct {
	Messages   []Message `json:"messages"`
	NextCursor string    `json:"nextCursor"`
}

// Balance is the account's credit balance. Balance is exact to the
// micro-credit (at most 6 decimals); MicroCredits turns it into an integer.
type Balance struct {
	Balance     float64   `json:"balance"`
	Currency    string    `json:"currency"`
	LastUpdated time.Time `json:"last_updated"`
}

// UsageQuery narrows a usage report. From and To are UTC days as
// "2026-11-25" (both included); GroupBy is "day" or "month"; Channel is
// "SMS", "WHATSAPP" or "RCS".
type UsageQuery struct {
	From, To, GroupBy, Channel string
}

// Usage is a usage report in the account's currency.
type Usage struct {
	Usage    []UsageRow `json:"usage"`
	Currency string     `json:"currency"`
}

// UsageRow is what was sent in one period (a day "2026-11-25" or a month
// "2026-11") on one channel to one calling code. Credits are exact to the
// micro-credit, refunds deducted.
type UsageRow struct {
	Period   string  `json:"period"`
	Channel  string  `json:"channel"`
	Country  string  `json:"country"`
	Messages int64   `json:"messages"`
	Segments int64   `json:"segments"`
	Credits  float64 `json:"credits"`
}

// Media is an uploaded file.
type Media struct {
	MediaID  string `json:"mediaId"`
	MimeType string `json:"mimeType"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
}

// Template is a WhatsApp template of the account.
type Template struct {
	Name       string   `json:"name"`
	Language   string   `json:"language"`
	Category   string   `json:"category"`
	Status     string   `json:"status"`
	Body       string   `json:"body"`
	Parameters []string `json:"parameters"`
}

// Limits are the account's tier and rate-limit windows.
type Limits struct {
	Tier   string `json:"tier"`
	Limits struct {
		Tier    LimitWindow `json:"tier"`
		Sending LimitWindow `json:"sending"`
		Status  LimitWindow `json:"status"`
		Media   LimitWindow `json:"media"`
	} `json:"limits"`
}

// LimitWindow is one one-minute window; Limit 0 means unlimited.
type LimitWindow struct {
	Limit     int       `json:"limit"`
	Remaining int       `json:"remaining"`
	Reset     time.Time `json:"reset"`
}

// TestReply is an inbound reply to simulate (test keys only).
type TestReply struct {
	From    string `json:"from"`
	Message string `json:"message"`
	Channel string `json:"channel,omitempty"`
}

// TestReplyResult tells which campaign a simulated reply matched ("" for
// none).
type TestReplyResult struct {
	Accepted   bool   `json:"accepted"`
	CampaignID string `json:"campaignId"`
}

// Event types (Event.Type).
const (
	EventDeliveryStatus  = "delivery_status"
	EventMessageReceived = "message_received"
)

// Event is one event of the events feed, or one webhook (ParseWebhook).
// ID is the webhook-id: deduplicate on it. Data is the webhook body; read
// it with DeliveryStatus or MessageReceived.
type Event struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"createdAt"`
	Data      json.RawMessage `json:"data"`
}

// DeliveryStatus is the body of a delivery_status event.
type DeliveryStatus struct {
	CampaignID   string    `json:"campaignId"`
	MessageID    string    `json:"messageId"`
	Phone        string    `json:"phone"`
	Status       string    `json:"status"`
	Timestamp    time.Time `json:"timestamp"`
	Provider     string    `json:"provider"`
	ErrorCode    string    `json:"errorCode"`
	ErrorMessage string    `json:"errorMessage"`
}

// MessageReceived is the body of a message_received event; CampaignID is
// empty for a reply that matched no campaign.
type MessageReceived struct {
	CampaignID string    `json:"campaignId"`
	Phone      string    `json:"phone"`
	Message    string    `json:"message"`
	ReceivedAt time.Time `json:"receivedAt"`
	Channel    string    `json:"channel"`
}

// DeliveryStatus decodes a delivery_status event.
func (e Event) DeliveryStatus() (DeliveryStatus, error) {
	var d DeliveryStatus
	return d, e.decode(EventDeliveryStatus, &d)
}

// MessageReceived decodes a message_received event.
func (e Event) MessageReceived() (MessageReceived, error) {
	var m MessageReceived
	return m, e.decode(EventMessageReceived, &m)
}

func (e Event) decode(want string, v any) error {
	if e.Type != want {
		return fmt.Errorf("msgsvc: event %s is %s, not %s", e.ID, e.Type, want)
	}
	if err := json.Unmarshal(e.Data, v); err != nil {
		return fmt.Errorf("msgsvc: decode event %s: %w", e.ID, err)
	}
	return nil
}

// EventPage is one answer of the events feed. NextCursor is always set:
// pass it back to get only newer events.
type EventPage struct {
	Events     []Event `json:"events"`
	NextCursor string  `json:"nextCursor"`
}
