package store

import (
	"context"
	"fmt"
	"time"

	"msgsvc/internal/domain"
	"msgsvc/internal/id"
)

const dayMS = int64(24 * time.Hour / time.Millisecond) // 86400000, as in the query

// Usage sums an account's messages of one environment per UTC day and
// channel (the channel that carried them), from the day of since on,
// oldest day first. Ids begin with their creation time, so the time range
// is a range of the account's ids and needs no index of its own.
func (s *Store) Usage(ctx context.Context, accountID string, env domain.Environment, since time.Time) ([]domain.UsageDay, error) {
	day := since.UTC().Truncate(24 * time.Hour)
	rows, err := s.rquery(ctx, `SELECT created_at / 86400000 AS day, channel, COUNT(*), COALESCE(SUM(charged), 0)
		FROM messages WHERE account_id = $1 AND id >= $2 AND env = $3 GROUP BY 1, 2 ORDER BY 1, 2`,
		accountID, id.Floor(id.Message, day), string(env))
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	defer rows.Close()
	var out []domain.UsageDay
	for rows.Next() {
		var u domain.UsageDay
		var d int64
		if err := rows.Scan(&d, &u.Channel, &u.Messages, &u.Charged); err != nil {
			return nil, fmt.Errorf("usage: %w", err)
		}
		u.Day = time.UnixMilli(d * dayMS).UTC()
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	return out, nil
}
