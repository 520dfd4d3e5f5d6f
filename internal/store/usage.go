package store

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// usageLine is one row of usage_days: a key's counts as one writer keeps
// them.
type usageLine struct {
	domain.UsageDelta
	holder string
}

var usageLines = newTable("usage_days", func(u *usageLine, c cols) cols {
	return c.add(textCol("account_id", &u.AccountID), enumCol("env", &u.Env), int64Col("day", &u.Day),
		enumCol("channel", &u.Channel), textCol("country", &u.Country), textCol("holder", &u.holder),
		int64Col("messages", &u.Messages), int64Col("segments", &u.Segments), int64Col("credits", &u.Credits),
		int64Col("sending", &u.Statuses[0]), int64Col("sent", &u.Statuses[1]), int64Col("delivered", &u.Statuses[2]),
		int64Col("read", &u.Statuses[3]), int64Col("failed", &u.Statuses[4]), int64Col("canceled", &u.Statuses[5]))
})

// usageCounts are the counted columns, in the order of domain.UsageCount.
var usageCounts = []string{"messages", "segments", "credits", "sending", "sent", "delivered", "read", "failed", "canceled"}

var usageUpsert, usageSums = func() (string, string) {
	set := make([]string, len(usageCounts))
	sums := make([]string, len(usageCounts))
	for i, c := range usageCounts {
		set[i] = c + " = usage_days." + c + " + excluded." + c
		sums[i] = "SUM(" + c + ")"
	}
	return ` ON CONFLICT (account_id, env, day, channel, country, holder) DO UPDATE SET ` + strings.Join(set, ", "),
		strings.Join(sums, ", ")
}()

// countDests are where a row's sums of usageCounts go.
func countDests(u *domain.UsageCount) []any {
	out := []any{&u.Messages, &u.Segments, &u.Credits}
	for i := range u.Statuses {
		out = append(out, &u.Statuses[i])
	}
	return out
}

// AddUsage adds deltas to the usage counts, in the caller's transaction:
// usage moves with the charge or refund that causes it, or not at all.
// Each PostgreSQL writer adds to rows of its own (as to its balance
// share), so concurrent sends never wait for one another's row locks;
// keys go in one order, so tools writing shared rows cannot deadlock.
func (tx *Tx) AddUsage(ctx context.Context, deltas []domain.UsageDelta) error {
	deltas = domain.MergeUsage(deltas)
	if len(deltas) == 0 {
		return nil
	}
	lines := make([]usageLine, len(deltas))
	for i, d := range deltas {
		lines[i] = usageLine{UsageDelta: d, holder: tx.holder}
	}
	slices.SortFunc(lines, func(a, b usageLine) int { return compareUsageKeys(a.UsageKey, b.UsageKey) })
	return insertRows(ctx, tx, usageLines, lines, 64, usageUpsert, true, "usage")
}

func compareUsageKeys(a, b domain.UsageKey) int {
	return cmp.Or(cmp.Compare(a.AccountID, b.AccountID), cmp.Compare(a.Env, b.Env), cmp.Compare(a.Day, b.Day),
		cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.Country, b.Country))
}

// UsageByDay reads the usage counts of q per day, channel and calling
// code, oldest day first. It reads the kept counts (a range of
// usage_days' key), never the messages.
func (s *Store) UsageByDay(ctx context.Context, q domain.UsageQuery) ([]domain.UsageDelta, error) {
	query, args := usageByDay(q)
	var out []domain.UsageDelta
	d := domain.UsageDelta{UsageKey: domain.UsageKey{AccountID: q.AccountID, Env: q.Env}}
	err := rowsOf(s.rquery(ctx, query, args...)).scan(append([]any{&d.Day, &d.Channel, &d.Country}, countDests(&d.UsageCount)...),
		func() { out = append(out, d) })
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	return out, nil
}

func usageByDay(q domain.UsageQuery) (string, []any) {
	query := `SELECT day, channel, country, ` + usageSums + ` FROM usage_days
		WHERE account_id = $1 AND env = $2 AND day >= $3 AND day <= $4`
	args := []any{q.AccountID, string(q.Env), q.From, q.To}
	if q.Channel != "" {
		query += ` AND channel = $5`
		args = append(args, string(q.Channel))
	}
	return query + ` GROUP BY day, channel, country HAVING SUM(messages) <> 0 OR SUM(credits) <> 0
		ORDER BY day, channel, country`, args
}

// Usage sums an account's messages of one environment per UTC day and
// channel (the channel that carried them), from the day of since on,
// oldest day first, from the kept counts.
func (s *Store) Usage(ctx context.Context, accountID string, env domain.Environment, since time.Time) ([]domain.UsageDay, error) {
	days, err := s.UsageByDay(ctx, domain.UsageQuery{AccountID: accountID, Env: env, From: domain.DayNumber(since),
		To: math.MaxInt32})
	if err != nil {
		return nil, err
	}
	var out []domain.UsageDay
	for _, d := range days {
		day := domain.DayTime(d.Day)
		if n := len(out); n > 0 && out[n-1].Day.Equal(day) && out[n-1].Channel == d.Channel {
			out[n-1].Messages += int(d.Messages)
			out[n-1].Charged += d.Credits
			continue
		}
		out = append(out, domain.UsageDay{Day: day, Channel: d.Channel, Messages: int(d.Messages), Charged: d.Credits})
	}
	return out, nil
}

// DaySpend is what an account's live keys were charged on one UTC day,
// refunds deducted, as the caller's transaction sees it.
func (tx *Tx) DaySpend(ctx context.Context, accountID string, day int64) (int64, error) {
	var sum int64
	err := tx.queryRow(ctx, `SELECT COALESCE(SUM(credits), 0) FROM usage_days WHERE account_id = $1 AND env = $2
		AND day = $3`, accountID, string(domain.Live), day).Scan(&sum)
	if err != nil {
		return 0, fmt.Errorf("day spend: %w", err)
	}
	return sum, nil
}

// UsageFromMessages counts an account's usage from its messages, every
// environment and day: what the kept counts must always equal. Tests and
// audits compare the two; it scans the account's messages.
func (s *Store) UsageFromMessages(ctx context.Context, accountID string) ([]domain.UsageDelta, error) {
	byStatus := ""
	for _, st := range domain.Statuses {
		byStatus += `, SUM(CASE WHEN status = '` + string(st) + `' THEN 1 ELSE 0 END)`
	}
	var out []domain.UsageDelta
	d := domain.UsageDelta{UsageKey: domain.UsageKey{AccountID: accountID}}
	err := rowsOf(s.rquery(ctx, `SELECT env, created_at / 86400000, channel, country_code, COUNT(*), SUM(segments), SUM(charged)`+
		byStatus+` FROM messages WHERE account_id = $1 GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`, accountID)).scan(
		append([]any{&d.Env, &d.Day, &d.Channel, &d.Country}, countDests(&d.UsageCount)...), func() { out = append(out, d) })
	if err != nil {
		return nil, fmt.Errorf("usage from messages: %w", err)
	}
	return out, nil
}

// KeptUsage reads an account's kept usage counts, every environment and
// day, in the order of UsageFromMessages.
func (s *Store) KeptUsage(ctx context.Context, accountID string) ([]domain.UsageDelta, error) {
	var out []domain.UsageDelta
	for _, env := range []domain.Environment{domain.Live, domain.Test} {
		ds, err := s.UsageByDay(ctx, domain.UsageQuery{AccountID: accountID, Env: env, From: 0, To: math.MaxInt32})
		if err != nil {
			return nil, err
		}
		out = append(out, ds...)
	}
	return out, nil
}

// foldBatch bounds the rows one fold statement moves.
const foldBatch = 5000

// FoldUsage folds the PostgreSQL writers' usage rows of days before
// beforeDay into one row per key (holder ”), so a report over past days
// reads as few rows as on SQLite. Each statement deletes a batch of
// writers' rows and adds exactly what it deleted (DELETE … RETURNING feeds
// the upsert), so a late change a writer makes meanwhile is either folded
// or left in its own row, never lost; rows a writer holds are skipped
// until the next fold. It returns the rows folded; SQLite keeps one row
// per key already.
func (s *Store) FoldUsage(ctx context.Context, beforeDay int64) (int64, error) {
	if s.dialect != Postgres {
		return 0, nil
	}
	keys := "account_id, env, day, channel, country"
	var total int64
	for {
		res, err := s.wexec(ctx, `WITH moved AS (DELETE FROM usage_days WHERE ctid IN (SELECT ctid FROM usage_days
				WHERE day < $1 AND holder <> '' LIMIT `+fmt.Sprint(foldBatch)+` FOR UPDATE SKIP LOCKED)
				RETURNING `+keys+`, `+strings.Join(usageCounts, ", ")+`)
			INSERT INTO usage_days (`+keys+`, holder, `+strings.Join(usageCounts, ", ")+`)
			SELECT `+keys+`, '', `+usageSums+` FROM moved GROUP BY `+keys+` ORDER BY `+keys+usageUpsert, beforeDay)
		if err != nil {
			return total, fmt.Errorf("fold usage: %w", err)
		}
		// The insert's count is of keys, not of rows moved; a batch that
		// found rows goes on until one finds none.
		n, _ := res.RowsAffected()
		if n == 0 {
			return total, nil
		}
		total += n
	}
}
