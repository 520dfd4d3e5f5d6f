package tracking

import (
	"context"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// UsageTx adds to the usage counts in the transaction that charges,
// refunds or re-prices the messages they count.
type UsageTx interface {
	AddUsage(ctx context.Context, deltas []domain.UsageDelta) error
}

// AlertTx is what deciding an account's alerts needs of the debit's
// transaction: the marks that let each crossing be posted once, and the
// event itself.
type AlertTx interface {
	MarkAlert(ctx context.Context, accountID, event, period, eventID string, at time.Time) (bool, error)
	MarkSpend(ctx context.Context, accountID string, day, threshold int64, eventID string, at time.Time) (bool, error)
	InsertEvents(ctx context.Context, evs []domain.Event) error
}

// InsertCounted writes new messages and counts them in usage (a send's
// and an opt-out's confirmation alike).
func InsertCounted(ctx context.Context, tx interface {
	InsertMessages(ctx context.Context, msgs []domain.Message) error
	UsageTx
}, msgs []domain.Message) error {
	if err := tx.InsertMessages(ctx, msgs); err != nil {
		return err
	}
	deltas := make([]domain.UsageDelta, len(msgs))
	for i, m := range msgs {
		deltas[i] = domain.UsageOf(m)
	}
	return tx.AddUsage(ctx, deltas)
}

// AlertAccount is what an account's alerts need to know of it: read with
// its key, so a send decides without a query whether to look at all.
type AlertAccount struct {
	id, currency, url string
	alerts            domain.Alerts
}

// AlertsOf is nil for an account without alerts.
func AlertsOf(a domain.Account) *AlertAccount {
	if a.Alerts.LowBalance == nil && a.Alerts.DailySpend == nil {
		return nil
	}
	return &AlertAccount{id: a.ID, currency: a.Currency, url: a.WebhookURL, alerts: a.Alerts}
}

// CheckAlerts runs in the transaction of a debit that left balance, after
// its messages were counted: a balance below the low-balance threshold
// or a UTC day's charges at the daily spend post their alert, each
// marked in the same transaction so that it goes out once per crossing
// (per day) however many nodes debit at the same moment.
func CheckAlerts(ctx context.Context, tx AlertTx, a *AlertAccount, balance int64, at time.Time) error {
	if a == nil {
		return nil
	}
	if _, err := lowBalanceAlert(ctx, tx, a, balance, at); err != nil {
		return err
	}
	t := a.alerts.DailySpend
	if t == nil {
		return nil
	}
	ev := alertEvent(a, domain.EventSpendDaily, balance, *t, at)
	ok, err := tx.MarkSpend(ctx, a.id, domain.DayNumber(at), *t, ev.ID, at)
	if err != nil || !ok {
		return err
	}
	return tx.InsertEvents(ctx, []domain.Event{ev})
}

// lowBalanceAlert marks and writes balance.low when balance is below the
// account's threshold and the crossing was not marked yet.
func lowBalanceAlert(ctx context.Context, tx AlertTx, a *AlertAccount, balance int64, at time.Time) ([]domain.Event, error) {
	t := a.alerts.LowBalance
	if t == nil || balance >= *t {
		return nil, nil
	}
	ev := alertEvent(a, domain.EventBalanceLow, balance, *t, at)
	ok, err := tx.MarkAlert(ctx, a.id, domain.EventBalanceLow, "", ev.ID, at)
	if err != nil || !ok {
		return nil, err
	}
	return []domain.Event{ev}, tx.InsertEvents(ctx, []domain.Event{ev})
}

// alertEvent is an account's alert as a webhook event of its live
// environment, due at once (any node's worker claims it), signed with the
// account's secret like every webhook. Without an account webhook it is
// kept for the events feed only.
func alertEvent(a *AlertAccount, event string, balance, threshold int64, at time.Time) domain.Event {
	return domain.Event{ID: id.New(id.Event, at), AccountID: a.id, Env: domain.Live, Event: event, URL: a.url,
		Body:          webhook.AlertBody(event, a.id, ledger.Credits(balance), ledger.Credits(threshold), a.currency, at),
		NextAttemptAt: at, CreatedAt: at}
}

// AnnounceLowBalances posts balance.low for accounts found below their
// threshold with no mark, each in a transaction of its own that marks it
// first, so a debit deciding the same crossing on another node at the
// same moment posts it once between them. It reports how many it posted.
func (t *Tracker) AnnounceLowBalances(ctx context.Context, accts []domain.Account) (int, error) {
	now := t.now()
	posted := 0
	for _, a := range accts {
		low := AlertsOf(a)
		if low == nil || low.alerts.LowBalance == nil {
			continue
		}
		low.alerts.DailySpend = nil
		var evs []domain.Event
		err := t.w.Write(ctx, func(w Work) error {
			var err error
			evs, err = lowBalanceAlert(ctx, w, low, a.Balance, now)
			return err
		})
		if err != nil {
			return posted, err
		}
		posted += len(evs)
	}
	return posted, nil
}
