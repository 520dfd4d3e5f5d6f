package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"msgsvc/internal/domain"
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

// ClearAlertMarks forgets an account's low-balance mark (its threshold
// changed: the new one is a new alert).
func (s *Store) ClearAlertMarks(ctx context.Context, accountID string) error {
	_, err := s.wexec(ctx, `DELETE FROM alert_marks WHERE account_id = $1 AND event = $2`, accountID, domain.EventBalanceLow)
	if err != nil {
		return fmt.Errorf("clear alert marks: %w", err)
	}
	return nil
}
