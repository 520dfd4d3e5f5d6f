package message

import (
	"sort"
	"time"

	"msgsvc/internal/ledger"
	"msgsvc/internal/store"
)

// Time formats as the contract's UTC timestamp with milliseconds, and as
// null when zero.
type Time time.Time

// TimeLayout is the one timestamp format of the API and webhooks.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Format renders t in TimeLayout.
func Format(t time.Time) string { return t.UTC().Format(TimeLayout) }

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	tt := time.Time(t)
	if tt.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + Format(tt) + `"`), nil
}

// HistoryEntry is one step of a message's status history.
type HistoryEntry struct {
	Status    string `json:"status"`
	Timestamp Time   `json:"timestamp"`
}

// View is a message as the status query shows it.
type View struct {
	MessageID    string         `json:"messageId"`
	CampaignID   string         `json:"campaignId"`
	To           string         `json:"to"`
	Type         string         `json:"type"`
	Channel      string         `json:"channel"`
	Status       string         `json:"status"`
	Segments     int            `json:"segments"`
	Encoding     string         `json:"encoding"`
	Credits      float64        `json:"credits"`
	Provider     *string        `json:"provider"`
	ErrorCode    *string        `json:"errorCode"`
	ErrorMessage *string        `json:"errorMessage"`
	Reference    *string        `json:"reference"`
	ScheduledAt  *Time          `json:"scheduledAt,omitempty"`
	CreatedAt    Time           `json:"createdAt"`
	UpdatedAt    Time           `json:"updatedAt"`
	History      []HistoryEntry `json:"history"`
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// NewView renders a stored message.
func NewView(m store.Message) View {
	v := View{
		MessageID: m.ID, CampaignID: m.CampaignID, To: m.To, Type: m.Type, Channel: m.Channel, Status: m.Status,
		Segments: m.Segments, Encoding: m.Encoding, Credits: ledger.Credits(m.Credits), Provider: strOrNil(m.Provider),
		ErrorCode: strOrNil(m.ErrorCode), ErrorMessage: strOrNil(m.ErrorMessage), Reference: strOrNil(m.Reference),
		CreatedAt: Time(m.CreatedAt), UpdatedAt: Time(m.UpdatedAt), History: History(m),
	}
	if !m.ScheduledAt.IsZero() {
		t := Time(m.ScheduledAt)
		v.ScheduledAt = &t
	}
	return v
}

// History lists the statuses a message reached, oldest first.
func History(m store.Message) []HistoryEntry {
	h := []HistoryEntry{{Sending, Time(m.CreatedAt)}}
	for _, s := range []struct {
		status string
		at     time.Time
	}{{Sent, m.SentAt}, {Delivered, m.DeliveredAt}, {Read, m.ReadAt}, {Failed, m.FailedAt}, {Canceled, m.CanceledAt}} {
		if !s.at.IsZero() {
			h = append(h, HistoryEntry{s.status, Time(s.at)})
		}
	}
	// Progress order breaks ties between steps stamped in the same
	// millisecond (a DELIVERED that came before its SENT).
	sort.SliceStable(h, func(i, j int) bool {
		ti, tj := time.Time(h[i].Timestamp), time.Time(h[j].Timestamp)
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return order(h[i].Status) < order(h[j].Status)
	})
	return h
}

func order(s string) int {
	if r := rank(s); r >= 0 {
		return r
	}
	return 10
}

// CampaignView is a campaign with its counts and one page of messages.
type CampaignView struct {
	CampaignID string         `json:"campaignId"`
	Status     string         `json:"status"`
	Type       string         `json:"type"`
	CreatedAt  Time           `json:"createdAt"`
	Total      int            `json:"total"`
	Counts     map[string]int `json:"counts"`
	Messages   []View         `json:"messages"`
	NextCursor *string        `json:"nextCursor"`
}

// campaignStatus summarises a campaign: SENDING while any message is open,
// CANCELED when every message was canceled, else COMPLETED.
func campaignStatus(counts map[string]int, total int) string {
	if counts[Sending]+counts[Sent] > 0 {
		return Sending
	}
	if counts[Canceled] == total && total > 0 {
		return Canceled
	}
	return "COMPLETED"
}
