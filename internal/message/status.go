// Package message holds the life of a message: accepting a send, charging
// it, queueing it for a provider, moving its status forward on reports and
// writing the webhook events that tell the integrator.
package message

import (
	"time"

	"msgsvc/internal/store"
)

// Status values of a message (CONTRACT section 3).
const (
	Sending   = "SENDING"
	Sent      = "SENT"
	Delivered = "DELIVERED"
	Read      = "READ"
	Failed    = "FAILED"
	Canceled  = "CANCELED"
)

// Channels.
const (
	SMS      = "SMS"
	WhatsApp = "WHATSAPP"
	RCS      = "RCS"
)

// Error codes reported in webhooks and status queries.
const (
	CodeInvalidNumber   = "INVALID_NUMBER"
	CodeProviderError   = "PROVIDER_ERROR"
	CodeRCSNotSupported = "RCS_NOT_SUPPORTED"
	CodeExpired         = "EXPIRED"
	CodeNoRoute         = "NO_ROUTE"
)

// rank orders the delivery progress. FAILED and CANCELED are terminal side
// exits, not steps of the progress.
func rank(s string) int {
	switch s {
	case Sending:
		return 0
	case Sent:
		return 1
	case Delivered:
		return 2
	case Read:
		return 3
	}
	return -1
}

// Final reports whether no further status can follow. DELIVERED is final
// for the integrator (the seed says so) although READ may still follow on
// WhatsApp and RCS.
func Final(s string) bool {
	return s == Delivered || s == Read || s == Failed || s == Canceled
}

// path returns the statuses a message passes through to get from cur to
// target, in order, or nil when the target would move it backwards or out
// of a terminal state. A DELIVERED that arrives before SENT yields both.
func path(cur, target string) []string {
	if cur == Failed || cur == Canceled || cur == Read {
		return nil
	}
	switch target {
	case Failed:
		if cur == Sending || cur == Sent {
			return []string{Failed}
		}
		return nil
	case Canceled:
		if cur == Sending {
			return []string{Canceled}
		}
		return nil
	}
	from, to := rank(cur), rank(target)
	if to <= from || from < 0 {
		return nil
	}
	steps := []string{Sent, Delivered, Read}
	return steps[from:to]
}

// stamp records when a message reached a status; its history is read back
// from these columns (each status is reached at most once).
func stamp(m *store.Message, status string, at time.Time) {
	switch status {
	case Sent:
		m.SentAt = at
	case Delivered:
		m.DeliveredAt = at
	case Read:
		m.ReadAt = at
	case Failed:
		m.FailedAt = at
	case Canceled:
		m.CanceledAt = at
	}
	m.Status = status
	m.UpdatedAt = at
}
