package tracking

import (
	"slices"
	"time"

	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/domain"
)

// money is what a transition gives back to the account, and whether it
// changed the message without a status step (queued it again, recorded
// its provider) so that it must be saved all the same.
type money struct {
	amount  int64
	note    string
	changed bool
	// upline is the refund to each account above the sender, as
	// m.Upline lists them (nil when none is due).
	upline []int64
}

// refundAll gives back everything the message still holds, at every level.
func refundAll(m *domain.Message, note string) money {
	refund := money{amount: m.Charged, note: note}
	m.Charged = 0
	if len(m.Upline) == 0 {
		return refund
	}
	// A copy: the message as it was read shares the slice, and is what the
	// update compares against.
	up := slices.Clone(m.Upline)
	refund.upline = make([]int64, len(up))
	for l := range up {
		refund.upline[l], up[l].Charged = up[l].Charged, 0
	}
	m.Upline = up
	return refund
}

// transition applies one report to a message in memory and returns the
// statuses it passed through and any refund. It is the only place where a
// message's status changes.
func transition(m *domain.Message, r Report, at time.Time) ([]domain.Status, money) {
	owned := r.LeaseOwner == "" || r.LeaseOwner == m.LeaseOwner
	switch r.Kind {
	case Accepted:
		if !owned || !awaitingHandOver(m) {
			return nil, money{}
		}
		return accept(m, r, at)
	case Retry:
		if !owned || (!awaitingHandOver(m) && !awaitingDelivery(m)) {
			return nil, money{}
		}
		if awaitingHandOver(m) {
			m.ErrorCode, m.ErrorMessage = r.ErrorCode, r.ErrorMessage // last error, shown while retrying
		}
		m.NextAttemptAt, m.LeaseOwner, m.UpdatedAt = quietDue(m, r.RetryAt), "", at
		return nil, money{changed: true}
	case Rejected:
		if !owned {
			return nil, money{}
		}
		if r.Provider != "" {
			m.Provider = r.Provider
		}
		if r.Route != "" {
			m.Route = r.Route
		}
		if r.ErrorCode == domain.CodeNoRoute {
			m.Provider = "" // the send's guess: no provider carried it
		}
		return fail(m, r.ErrorCode, r.ErrorMessage, at)
	case Expire:
		return fail(m, domain.CodeExpired, "", at)
	case Fallback:
		if !owned || m.Status != domain.Sending || m.Channel != domain.RCS {
			return nil, money{}
		}
		return fallBack(m, r, at, "the device does not support RCS: sent as SMS, difference to the SMS price refunded")
	case Revoked:
		if !owned || !awaitingDelivery(m) {
			return nil, money{}
		}
		return fallBack(m, r, at, "not delivered as RCS in time: taken back and sent as SMS, difference to the SMS price refunded")
	case Unrevoked:
		if !owned || !awaitingDelivery(m) {
			return nil, money{}
		}
		refund := stopWaiting(m)
		m.UpdatedAt, refund.changed = at, true
		return nil, refund
	case Release:
		return release(m, r, at)
	case RejectHeld:
		return rejectHeld(m, r, at)
	case Cancel:
		switch m.Status {
		case domain.Held:
			resolve(m, domain.HoldCanceled, domain.CanceledBy, at)
		case domain.Sending:
		default:
			return nil, money{}
		}
		refund := refundAll(m, "canceled")
		m.NextAttemptAt, m.LeaseOwner = time.Time{}, ""
		m.Stamp(domain.Canceled, at)
		return []domain.Status{domain.Canceled}, refund
	}
	return progress(m, r, at)
}

// awaitingHandOver reports whether a message waits for a provider to take
// it: a new one, or an RCS message that its provider took back and that
// waits, still SENT, to go out as its SMS fallback.
func awaitingHandOver(m *domain.Message) bool {
	return m.Status == domain.Sending ||
		(m.Status == domain.Sent && m.Type == domain.RCS && m.Channel == domain.SMS && !m.NextAttemptAt.IsZero())
}

// AwaitingDelivery reports whether an RCS message that a provider took
// waits for its delivery until NextAttemptAt: then the dispatcher asks
// the provider to take it back (Revoker) and sends its SMS fallback.
func AwaitingDelivery(m *domain.Message) bool { return awaitingDelivery(m) }

func awaitingDelivery(m *domain.Message) bool {
	return m.Status == domain.Sent && m.Channel == domain.RCS && !m.NextAttemptAt.IsZero()
}

// accept records that a provider took the message. An RCS message with a
// fallback whose provider can take it back keeps its reserve and waits
// for its delivery until r.FallbackAt; any other is priced at once.
func accept(m *domain.Message, r Report, at time.Time) ([]domain.Status, money) {
	m.Provider, m.ProviderRef = r.Provider, r.Ref
	m.Route, m.Cost, m.CostCurrency = r.Route, r.Cost, r.Currency
	m.NextAttemptAt, m.LeaseOwner = time.Time{}, ""
	// An error of an earlier, failed hand-over is history now.
	m.ErrorCode, m.ErrorMessage = "", ""
	if m.Status == domain.Sent { // an SMS fallback handed over: no new step
		m.UpdatedAt = at
		return nil, money{changed: true}
	}
	var refund money
	if _, ok := m.Content.SMSFallback(); ok && m.Channel == domain.RCS && !r.FallbackAt.IsZero() && r.FallbackAt.Before(m.ExpiresAt) {
		m.NextAttemptAt = r.FallbackAt
	} else {
		refund = settle(m)
	}
	m.Stamp(domain.Sent, at)
	return []domain.Status{domain.Sent}, refund
}

// progress applies a provider's delivery report.
func progress(m *domain.Message, r Report, at time.Time) ([]domain.Status, money) {
	if m.Status == domain.Sent && awaitingHandOver(m) {
		// Taken back and queued as SMS: no SMS provider has it yet, so the
		// report is about the revoked RCS message.
		return nil, money{}
	}
	if r.Status == domain.Failed {
		return fail(m, r.ErrorCode, r.ErrorMessage, at)
	}
	steps := m.Status.Path(r.Status)
	if len(steps) == 0 {
		return nil, money{}
	}
	var refund money
	switch {
	case m.Status == domain.Sending:
		// A report can overtake the submission's own answer.
		m.NextAttemptAt, m.LeaseOwner = time.Time{}, ""
		m.ErrorCode, m.ErrorMessage = "", ""
		if r.Ref != "" {
			m.ProviderRef = r.Ref
		}
		refund = settle(m)
	case awaitingDelivery(m):
		refund = stopWaiting(m)
	}
	for _, st := range steps {
		m.Stamp(st, at)
	}
	return steps, refund
}

// fallBack queues an RCS message again, due at once, as an SMS: the
// dispatcher hands it to the SMS route (r.Provider) on its next claim, and
// the reserve above the SMS price is refunded.
func fallBack(m *domain.Message, r Report, at time.Time, note string) ([]domain.Status, money) {
	plan, ok := m.Content.SMSFallback()
	if !ok {
		return fail(m, domain.CodeRCSNotSupported, "", at)
	}
	m.Channel, m.Segments, m.Encoding = domain.SMS, plan.Segments, plan.Encoding
	m.Provider, m.ProviderRef, m.ErrorCode, m.ErrorMessage = r.Provider, "", "", ""
	m.NextAttemptAt, m.LeaseOwner, m.Attempts, m.UpdatedAt = quietDue(m, at), "", 0, at
	refund := lower(m, plan.SMSCredits, func(l domain.Level) int64 { return l.SMS }, note)
	refund.changed = true
	return nil, refund
}

// stopWaiting ends an RCS message's wait for its delivery: it will not
// fall back, so it costs the RCS price.
func stopWaiting(m *domain.Message) money {
	m.NextAttemptAt, m.LeaseOwner = time.Time{}, ""
	return settle(m)
}

// settle brings an RCS message's reserve for an SMS fallback down to the
// RCS price once a provider took it as RCS for good.
func settle(m *domain.Message) money {
	if m.Channel != domain.RCS {
		return money{}
	}
	plan, ok := m.Content.SMSFallback()
	if !ok {
		return money{}
	}
	return lower(m, plan.RCSCredits, func(l domain.Level) int64 { return l.RCS },
		"sent as RCS: the reserve for an SMS fallback refunded")
}

// lower sets the price of a message to the channel actually used and
// returns the refund of what was charged beyond it, at every level (each
// level's price on that channel is levelPrice of it).
func lower(m *domain.Message, price int64, levelPrice func(domain.Level) int64, note string) money {
	m.Credits = price
	var refund money
	if m.Charged > price {
		refund = money{amount: m.Charged - price, note: note}
		m.Charged = price
	}
	if len(m.Upline) == 0 {
		return refund
	}
	up := slices.Clone(m.Upline)
	for l := range up {
		if p := levelPrice(up[l]); up[l].Charged > p {
			if refund.upline == nil {
				refund.upline = make([]int64, len(up))
			}
			refund.upline[l], up[l].Charged = up[l].Charged-p, p
		}
	}
	if refund.upline != nil {
		m.Upline, refund.note = up, note
	}
	return refund
}

// fail ends a message in FAILED. Credits come back when no provider has
// the message (docs/api.md, credits): it was never taken, or it was taken
// back and its SMS fallback was not taken.
func fail(m *domain.Message, code, text string, at time.Time) ([]domain.Status, money) {
	if len(m.Status.Path(domain.Failed)) == 0 {
		return nil, money{}
	}
	var refund money
	switch {
	case awaitingHandOver(m):
		refund = refundAll(m, "failed before a provider accepted it: "+code)
	case m.BillDelivery:
		// Billed on the outcome: a message a provider took and that ended
		// FAILED (EXPIRED among them) is charged to no level.
		refund = refundAll(m, "billed on delivery, not delivered: "+orProviderError(code))
	case awaitingDelivery(m):
		refund = stopWaiting(m)
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

func orProviderError(code string) string {
	if code == "" {
		return domain.CodeProviderError
	}
	return code
}

// quietDue is when a message put back in the queue for t may go: not
// inside the quiet hours it was accepted under.
func quietDue(m *domain.Message, t time.Time) time.Time {
	return compliance.QuietUntil(m.Content.Quiet, m.To, t)
}

// release lets a held message go out: SENDING and due now (or at its
// schedule, outside its quiet hours). No step is announced: HELD never
// was, and to the integrator it was SENDING all along.
func release(m *domain.Message, r Report, at time.Time) ([]domain.Status, money) {
	if m.Status != domain.Held {
		return nil, money{}
	}
	resolve(m, domain.HoldReleased, r.By, at)
	m.Status, m.UpdatedAt = domain.Sending, at
	m.NextAttemptAt, m.LeaseOwner, m.Attempts = quietDue(m, later(at, m.ScheduledAt)), "", 0
	return nil, money{changed: true}
}

// rejectHeld fails a held message with FRAUD_SUSPECTED and refunds it at
// every level.
func rejectHeld(m *domain.Message, r Report, at time.Time) ([]domain.Status, money) {
	if m.Status != domain.Held {
		return nil, money{}
	}
	how := domain.HoldRejected
	if r.ErrorMessage == domain.HoldExpired {
		how = domain.HoldExpired
	}
	resolve(m, how, r.By, at)
	refund := refundAll(m, "held by the fraud guard and "+how+": "+domain.CodeFraudSuspected)
	m.ErrorCode, m.ErrorMessage = domain.CodeFraudSuspected, domain.ErrorText(domain.CodeFraudSuspected)
	m.NextAttemptAt, m.LeaseOwner = time.Time{}, ""
	m.Stamp(domain.Failed, at)
	return []domain.Status{domain.Failed}, refund
}

// resolve records how a hold ended on the message's decision (a copy:
// the message as read shares it).
func resolve(m *domain.Message, how, by string, at time.Time) {
	d := domain.FraudDecision{}
	if m.Fraud != nil {
		d = *m.Fraud
	}
	d.Resolution, d.ResolvedBy, d.ResolvedAt = how, by, at
	m.Fraud = &d
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
