// Package vocab is Twilio's words for msgsvc's things, shared by the
// Twilio-compatible API's resources and its callbacks so that both tell a
// client the same: its statuses, its dates and its API version.
package vocab

import (
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// APIVersion is the version of Twilio's REST API the front speaks.
const APIVersion = "2010-04-01"

// Twilio's message statuses.
const (
	Queued      = "queued"
	Scheduled   = "scheduled"
	Sending     = "sending"
	Sent        = "sent"
	Delivered   = "delivered"
	Undelivered = "undelivered"
	Failed      = "failed"
	Canceled    = "canceled"
	Read        = "read"
	Received    = "received"
)

// Status is a message's status in Twilio's words. msgsvc's SENDING is
// Twilio's scheduled while its send time is ahead, sending once a
// provider has been tried, and queued before that; a FAILED message that
// a provider took is undelivered (the network failed it), one no provider
// took is failed (msgsvc failed it).
func Status(m domain.Message, now time.Time) string {
	switch m.Status {
	case domain.Sending:
		switch {
		case !m.ScheduledAt.IsZero() && m.ScheduledAt.After(now):
			return Scheduled
		case m.Attempts > 0 || m.ProviderRef != "":
			return Sending
		}
		return Queued
	case domain.Sent:
		return Sent
	case domain.Delivered:
		return Delivered
	case domain.Read:
		return Read
	case domain.Failed:
		if m.ProviderRef != "" || !m.SentAt.IsZero() {
			return Undelivered
		}
		return Failed
	case domain.Canceled:
		return Canceled
	}
	return Queued
}

// StepStatus is the Twilio status of one step a message took (a status
// callback's MessageStatus): as Status, but of the step, not of where the
// message stands now.
func StepStatus(m domain.Message, step domain.Status, now time.Time) string {
	m.Status = step
	return Status(m, now)
}

// dateLayout is RFC 2822 as Twilio writes its dates, always in UTC.
const dateLayout = "Mon, 02 Jan 2006 15:04:05 +0000"

// Date writes t as Twilio does; the zero time is "" (the resource's null).
func Date(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(dateLayout)
}

// ParseDate reads a date as Twilio writes it, or as RFC 3339 / a bare
// YYYY-MM-DD (what the list filters and SendAt take).
func ParseDate(s string) (time.Time, error) {
	for _, layout := range []string{dateLayout, time.RFC1123Z, time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	_, err := time.Parse(time.RFC3339, s)
	return time.Time{}, err
}
