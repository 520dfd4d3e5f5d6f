package store

import (
	"context"
	"fmt"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
)

// marginKeys are the SQL of each grouping of the margins report.
var marginKeys = map[string]string{
	"provider": "provider",
	"account":  "account_id",
	"country":  "country_code",
	"day":      "CAST(created_at / 86400000 AS TEXT)",
}

// Margins sums the live messages created from the day of from to the day
// of to (inclusive, UTC) that a provider took, grouped by provider,
// account, country calling code or day (as Unix days; the caller names
// them). Ids begin with their creation time, so the range is a range of
// the primary key.
func (s *Store) Margins(ctx context.Context, from, to time.Time, groupBy string) ([]domain.MarginRow, error) {
	key, ok := marginKeys[groupBy]
	if !ok {
		return nil, fmt.Errorf("margins: no grouping %q", groupBy)
	}
	lo := id.Floor(id.Message, from.UTC().Truncate(24*time.Hour))
	hi := id.Floor(id.Message, to.UTC().Truncate(24*time.Hour).Add(24*time.Hour))
	var out []domain.MarginRow
	var m domain.MarginRow
	err := rowsOf(s.rquery(ctx, `SELECT `+key+`, COUNT(*), COALESCE(SUM(segments), 0), COALESCE(SUM(charged), 0),
		COALESCE(SUM(cost), 0),
		COALESCE(SUM(CASE WHEN status IN ('DELIVERED', 'READ', 'FAILED') THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN status IN ('DELIVERED', 'READ') THEN 1 ELSE 0 END), 0)
		FROM messages WHERE id >= $1 AND id < $2 AND env = 'live' AND sent_at IS NOT NULL
		GROUP BY 1 ORDER BY 1`, lo, hi)).scan(
		[]any{&m.Key, &m.Messages, &m.Segments, &m.Price, &m.Cost, &m.Final, &m.Delivered}, func() { out = append(out, m) })
	if err != nil {
		return nil, fmt.Errorf("margins: %w", err)
	}
	return out, nil
}
