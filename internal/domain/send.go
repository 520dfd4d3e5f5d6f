package domain

import (
	"errors"
	"fmt"
	"time"
)

// Idempotency is a remembered response to a POST with an Idempotency-Key.
type Idempotency struct {
	KeyID       string
	Key         string
	RequestHash string
	StatusCode  int
	Response    []byte
	CreatedAt   time.Time
}

// MessageFilter narrows a message search (the panel's Messages page).
type MessageFilter struct {
	AccountID  string
	Phone      string
	Env        Environment
	Status     Status
	CampaignID string
	Reference  string
	From, To   time.Time
	Before     string // cursor: messages written before this one
	Limit      int
}

// Part is one piece of a message a provider took in several (an SMPP
// segment), named by the provider's id for it.
type Part struct {
	Provider  string
	Ref       string
	MessageID string
	Part      int // 1-based
	Parts     int
	Status    Status // "" until a receipt names it
}

// PendingReport is a report for a provider id that no message carried
// when it arrived.
type PendingReport struct {
	Provider     string
	Ref          string
	Status       Status
	ErrorCode    string
	ErrorMessage string
	ReportedAt   time.Time
	ReceivedAt   time.Time
}

// ErrDailyLimit: the account's daily limit of new WhatsApp conversations
// would be exceeded. The error returned is a *DailyLimitError.
var ErrDailyLimit = errors.New("daily conversation limit reached")

// DailyLimitError tells how much of the daily limit is used.
type DailyLimitError struct {
	Day   string // UTC day, YYYY-MM-DD
	Limit int
	Used  int // conversations already opened that day
	Asked int // conversations the refused send would have opened
}

func (e *DailyLimitError) Error() string {
	return fmt.Sprintf("daily conversation limit reached: %d of %d opened on %s, %d more asked", e.Used, e.Limit, e.Day, e.Asked)
}

// Is makes errors.Is(err, ErrDailyLimit) hold.
func (e *DailyLimitError) Is(target error) bool { return target == ErrDailyLimit }

// Conversations are the WhatsApp conversations a send opens: one per
// phone, counted against the limit of the UTC day of Day.
type Conversations struct {
	AccountID string
	Env       Environment
	Phones    []string
	At        time.Time // when they open
	Day       time.Time // the day they count for
	Limit     int       // 0: unlimited
}

// DayKey is the UTC day a time counts for.
func DayKey(t time.Time) string { return t.UTC().Format("2006-01-02") }

// UsageDay is what an account sent on one channel on one UTC day.
type UsageDay struct {
	Day      time.Time // midnight UTC
	Channel  Channel
	Messages int
	Charged  int64 // micro-credits
}
