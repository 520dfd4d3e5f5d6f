package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// BalanceRose clears the account's low-balance mark once a credit has
// brought its balance back to or above the threshold (or the alert is
// off), so the next crossing is posted again. Most credits find no mark:
// a lookup of the key, sent with the transaction's next round trip.
func (tx *Tx) BalanceRose(ctx context.Context, accountID string, balance int64) error {
	err := tx.execLater(ctx, `DELETE FROM alert_marks WHERE account_id = $1 AND event = $2 AND period = ''
		AND $3 >= COALESCE((SELECT alert_low_balance FROM accounts WHERE id = $1), 0)`,
		accountID, domain.EventBalanceLow, balance)
	if err != nil {
		return fmt.Errorf("clear low-balance mark: %w", err)
	}
	return nil
}

// MarkAlert records that an account's alert was posted for a period,
// unless it already was: it reports whether this call recorded it. The
// key is unique, so of two transactions marking the same crossing on any
// nodes, one waits for the other and finds its mark.
func (tx *Tx) MarkAlert(ctx context.Context, accountID, event, period, eventID string, at time.Time) (bool, error) {
	return tx.mark(ctx, `INSERT INTO alert_marks (account_id, event, period, event_id, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (account_id, event, period) DO NOTHING RETURNING event_id`,
		accountID, event, period, eventID, ms(at))
}

// MarkSpend marks the account's daily-spend alert of a UTC day if what its
// live keys were charged that day (refunds deducted, this transaction's
// charges included) reached threshold and the day was not marked yet; it
// reports whether this call marked it.
func (tx *Tx) MarkSpend(ctx context.Context, accountID string, day, threshold int64, eventID string, at time.Time) (bool, error) {
	return tx.mark(ctx, `INSERT INTO alert_marks (account_id, event, period, event_id, created_at)
		SELECT $1, $2, $3, $4, $5 WHERE (SELECT COALESCE(SUM(credits), 0) FROM usage_days
			WHERE account_id = $1 AND env = $6 AND day = $7) >= CAST($8 AS BIGINT)
		ON CONFLICT (account_id, event, period) DO NOTHING RETURNING event_id`,
		accountID, domain.EventSpendDaily, domain.DayTime(day).Format(time.DateOnly), eventID, ms(at),
		string(domain.Live), day, threshold)
}

func (tx *Tx) mark(ctx context.Context, query string, args ...any) (bool, error) {
	var got string
	err := tx.queryRow(ctx, query, args...).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("mark alert: %w", err)
	}
	return true, nil
}

// SetAccountWebhook sets the URL of the account's own events ("" for none).
func (s *Store) SetAccountWebhook(ctx context.Context, accountID, url string) error {
	res, err := s.wexec(ctx, `UPDATE accounts SET webhook_url = $2 WHERE id = $1`, accountID, url)
	return affectedOne(res, err, "set account webhook")
}

// SetAlerts sets an account's alert thresholds. A new low-balance
// threshold is a new alert: its mark goes, so a balance already below it
// is announced by the next debit or the sweeper.
func (s *Store) SetAlerts(ctx context.Context, accountID string, a domain.Alerts) error {
	return s.Write(ctx, func(tx *Tx) error {
		var before sql.NullInt64
		err := tx.queryRow(ctx, `SELECT alert_low_balance FROM accounts WHERE id = $1`, accountID).Scan(&before)
		if errors.Is(err, sql.ErrNoRows) {
			return domain.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("set alerts: %w", err)
		}
		if _, err := tx.exec(ctx, `UPDATE accounts SET alert_low_balance = $2, alert_daily_spend = $3 WHERE id = $1`,
			accountID, nullable(a.LowBalance), nullable(a.DailySpend)); err != nil {
			return fmt.Errorf("set alerts: %w", err)
		}
		if before.Valid && a.LowBalance != nil && before.Int64 == *a.LowBalance {
			return nil
		}
		if _, err := tx.exec(ctx, `DELETE FROM alert_marks WHERE account_id = $1 AND event = $2`,
			accountID, domain.EventBalanceLow); err != nil {
			return fmt.Errorf("set alerts: %w", err)
		}
		return nil
	})
}

func nullable(v *int64) any {
	if v == nil {
		return nil
	}
	return *v
}

// AlertEvents lists an account's own events (balance.low, spend.daily,
// fraud.suspected), newest first.
func (s *Store) AlertEvents(ctx context.Context, accountID string, limit int) ([]domain.Event, error) {
	return events.scanAll(s.rquery(ctx, `SELECT `+eventCols+` FROM webhook_events WHERE account_id = $1
		AND event IN ('balance.low', 'spend.daily', 'fraud.suspected') ORDER BY `+s.seq()+` DESC LIMIT $2`, accountID, limit))
}

// TroubledEvents lists an account's webhooks that need attention, newest
// first: given up (failed), refused for good (gone), or failing and
// waiting for their next try.
func (s *Store) TroubledEvents(ctx context.Context, accountID string, limit int) ([]domain.Event, error) {
	return events.scanAll(s.rquery(ctx, `SELECT `+eventCols+` FROM webhook_events WHERE account_id = $1
		AND (state IN ('failed', 'gone') OR (state = 'pending' AND attempts > 0)) ORDER BY `+s.seq()+` DESC LIMIT $2`,
		accountID, limit))
}

// TopSpenders lists the accounts whose live keys were charged the most
// from a UTC day on, most first. The range is closed at both ends so
// that SQLite's planner, without statistics, reads the days' range of
// usage_days_day rather than the whole table in key order.
func (s *Store) TopSpenders(ctx context.Context, fromDay int64, limit int) ([]domain.AccountSpend, error) {
	var out []domain.AccountSpend
	var a domain.AccountSpend
	err := rowsOf(s.rquery(ctx, `SELECT account_id, SUM(messages), SUM(credits) FROM usage_days WHERE day >= $1 AND day <= $4
		AND env = $2 GROUP BY account_id ORDER BY SUM(credits) DESC, account_id LIMIT $3`,
		fromDay, string(domain.Live), limit, int64(math.MaxInt32))).scan(
		[]any{&a.AccountID, &a.Messages, &a.Credits}, func() { out = append(out, a) })
	if err != nil {
		return nil, fmt.Errorf("top spenders: %w", err)
	}
	return out, nil
}

// TrafficByDay sums every account's live messages and charges per UTC
// day from a day on, by day then account: the operators' chart of traffic
// across accounts, read from the kept counts.
func (s *Store) TrafficByDay(ctx context.Context, fromDay int64) ([]domain.AccountDay, error) {
	var out []domain.AccountDay
	var a domain.AccountDay
	err := rowsOf(s.rquery(ctx, `SELECT day, account_id, SUM(messages), SUM(credits) FROM usage_days WHERE day >= $1 AND day <= $3
		AND env = $2 GROUP BY day, account_id HAVING SUM(messages) <> 0 OR SUM(credits) <> 0 ORDER BY day, account_id`,
		fromDay, string(domain.Live), int64(math.MaxInt32))).scan(
		[]any{&a.Day, &a.AccountID, &a.Messages, &a.Credits}, func() { out = append(out, a) })
	if err != nil {
		return nil, fmt.Errorf("traffic by day: %w", err)
	}
	return out, nil
}

// UnmarkedLowBalances lists the accounts whose balance is below their
// low-balance alert with no balance.low mark: a crossing no debit
// announced (a threshold set under the balance, or on PostgreSQL two
// writers' debits that each saw the other's share as it was before).
func (s *Store) UnmarkedLowBalances(ctx context.Context, limit int) ([]domain.Account, error) {
	balance := "a.balance"
	if s.dialect == Postgres {
		balance = "(a.balance + COALESCE((SELECT SUM(h.amount) FROM balance_holds h WHERE h.account_id = a.id), 0))"
	}
	return accounts.scanAll(s.rquery(ctx, `SELECT `+s.accountList("a")+` FROM accounts a
		WHERE a.alert_low_balance IS NOT NULL AND `+balance+` < a.alert_low_balance
		AND NOT EXISTS (SELECT 1 FROM alert_marks m WHERE m.account_id = a.id AND m.event = $1 AND m.period = '')
		ORDER BY a.id LIMIT $2`, domain.EventBalanceLow, limit))
}

// RecentFailures lists an environment's messages that failed at or after
// since, latest first (the partial index messages_failed).
func (s *Store) RecentFailures(ctx context.Context, accountID string, env domain.Environment, since time.Time, limit int) ([]domain.Message, error) {
	return messages.scanAll(s.rquery(ctx, `SELECT `+messageCols+` FROM messages WHERE account_id = $1 AND status = 'FAILED'
		AND failed_at >= $2 AND env = $3 ORDER BY failed_at DESC LIMIT $4`, accountID, ms(since), string(env), limit))
}
