package message

import (
	"time"

	"msgsvc/internal/domain"
)

// money is what a transition gives back to the account, and whether it
// queued the message again.
type money struct {
	amount   int64
	note     string
	requeued bool
}

// transition applies one report to a message in memory and returns the
// statuses it passed through and any refund. It is the only place where a
// message's status changes.
func transition(m *domain.Message, r Report, at time.Time) ([]domain.Status, money) {
	owned := r.LeaseOwner == "" || r.LeaseOwner == m.LeaseOwner
	switch r.Kind {
	case Accepted:
		if !owned || m.Status != domain.Sending {
			return nil, money{}
		}
		m.Provider, m.ProviderRef = r.Provider, r.Ref
		m.NextAttemptAt, m.LeaseOwner = time.Time{}, ""
		refund := settle(m)
		m.Stamp(domain.Sent, at)
		return []domain.Status{domain.Sent}, refund
	case Retry:
		if !owned || m.Status != domain.Sending {
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
		return fail(m, domain.CodeExpired, "", at)
	case Fallback:
		if !owned || m.Status != domain.Sending || m.Channel != domain.RCS {
			return nil, money{}
		}
		return fallBack(m, r, at)
	case Cancel:
		if m.Status != domain.Sending {
			return nil, money{}
		}
		refund := money{amount: m.Charged, note: "canceled"}
		m.Charged = 0
		m.NextAttemptAt, m.LeaseOwner = time.Time{}, ""
		m.Stamp(domain.Canceled, at)
		return []domain.Status{domain.Canceled}, refund
	}
	return progress(m, r, at)
}

// progress applies a provider's delivery report.
func progress(m *domain.Message, r Report, at time.Time) ([]domain.Status, money) {
	if r.Status == domain.Failed {
		return fail(m, r.ErrorCode, r.ErrorMessage, at)
	}
	steps := m.Status.Path(r.Status)
	if len(steps) == 0 {
		return nil, money{}
	}
	var refund money
	if m.Status == domain.Sending {
		// A report can overtake the submission's own answer.
		m.NextAttemptAt, m.LeaseOwner = time.Time{}, ""
		if r.Ref != "" {
			m.ProviderRef = r.Ref
		}
		refund = settle(m)
	}
	for _, st := range steps {
		m.Stamp(st, at)
	}
	return steps, refund
}

// fallBack queues an RCS message again, due at once, as an SMS: the
// dispatcher hands it to the SMS route (r.Provider) on its next claim, and
// the reserve above the SMS price is refunded.
func fallBack(m *domain.Message, r Report, at time.Time) ([]domain.Status, money) {
	plan, ok := m.Content.SMSFallback()
	if !ok {
		return fail(m, domain.CodeRCSNotSupported, "", at)
	}
	m.Channel, m.Segments, m.Encoding = domain.SMS, plan.Segments, plan.Encoding
	m.Provider, m.ProviderRef, m.ErrorCode, m.ErrorMessage = r.Provider, "", "", ""
	m.NextAttemptAt, m.LeaseOwner, m.Attempts, m.UpdatedAt = at, "", 0, at
	refund := lower(m, plan.SMSCredits, "the device does not support RCS: sent as SMS, difference to the SMS price refunded")
	refund.requeued = true
	return nil, refund
}

// settle brings an RCS message's reserve for an SMS fallback down to the
// RCS price once a provider took it as RCS.
func settle(m *domain.Message) money {
	if m.Channel != domain.RCS {
		return money{}
	}
	plan, ok := m.Content.SMSFallback()
	if !ok {
		return money{}
	}
	return lower(m, plan.RCSCredits, "sent as RCS: the reserve for an SMS fallback refunded")
}

// lower sets the price of a message to the channel actually used and
// returns the refund of what was charged beyond it.
func lower(m *domain.Message, price int64, note string) money {
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
func fail(m *domain.Message, code, text string, at time.Time) ([]domain.Status, money) {
	if len(m.Status.Path(domain.Failed)) == 0 {
		return nil, money{}
	}
	var refund money
	if m.Status == domain.Sending {
		refund = money{amount: m.Charged, note: "failed before a provider accepted it: " + code}
		m.Charged = 0
	}
	if code == "" {
		code = domain.CodeProviderError
	}
	if text == "" {
		text = domain.ErrorText(code)
	}
	m.ErrorCode, m.ErrorMessage = code, text
	m.NextAttemptAt, m.LeaseOwner = time.Time{}, ""
	m.Stamp(domain.Failed, at)
	return []domain.Status{domain.Failed}, refund
}
