package intake

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

// InsertCounted writes new messages and counts them in usage.
func InsertCounted(ctx context.Context, tx interface {
	InsertMessages(ctx context.Context, msgs []domain.Message) error
	UsageTx
}, msgs []domain.Message) error {
	if err := tx.InsertMessages(ctx, msgs); err != nil {
		return err
	}
	deltas := make([]domain.UsageDelta, len(msgs))
	for i := range msgs {
		deltas[i] = domain.UsageOf(&msgs[i])
	}
	return tx.AddUsage(ctx, deltas)
}

// alertAccount is what an account's alerts need to know of it: read with
// its key, so a send decides without a query whether to look at all.
type alertAccount struct {
	id, currency, url string
	alerts            domain.Alerts
}

// alertsOf is nil for an account without alerts.
func alertsOf(a domain.Account) *alertAccount {
	if a.Alerts.LowBalance == nil && a.Alerts.DailySpend == nil {
		return nil
	}
	return &alertAccount{id: a.ID, currency: a.Currency, url: a.WebhookURL, alerts: a.Alerts}
}

// checkAlerts runs in the transaction of a debit that left balance, after
// its messages were counted: a balance below the low-balance threshold
// or a UTC day's charges at the daily spend post their alert, each
// marked in the same transaction so that it goes out once per crossing
// (per day) however many nodes debit at the same moment.
func checkAlerts(ctx context.Context, tx AlertTx, a *alertAccount, balance int64, at time.Time) error {
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

// LowBalanceAlert posts balance.low for an account found below its
// threshold outside a debit (a sweep), in the caller's transaction; it
// marks the crossing first, so that a debit deciding the same crossing at
// the same moment posts it once between them.
func LowBalanceAlert(ctx context.Context, tx AlertTx, a domain.Account, at time.Time) ([]domain.Event, error) {
	low := alertsOf(a)
	if low == nil || low.alerts.LowBalance == nil {
		return nil, nil
	}
	return lowBalanceAlert(ctx, tx, low, a.Balance, at)
}

// lowBalanceAlert marks and writes balance.low when balance is below the
// account's threshold and the crossing was not marked yet.
func lowBalanceAlert(ctx context.Context, tx AlertTx, a *alertAccount, balance int64, at time.Time) ([]domain.Event, error) {
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
func alertEvent(a *alertAccount, event string, balance, threshold int64, at time.Time) domain.Event {
	return domain.Event{ID: id.New(id.Event, at), AccountID: a.id, Env: domain.Live, Event: event, URL: a.url,
		Body:          webhook.AlertBody(event, a.id, ledger.Credits(balance), ledger.Credits(threshold), a.currency, at),
		NextAttemptAt: at, CreatedAt: at}
}
