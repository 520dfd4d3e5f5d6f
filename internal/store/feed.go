package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
)

// feedSequenceBatch bounds how many events one read numbers (PostgreSQL),
// so that the first read of a long-unread feed stays a short transaction.
const feedSequenceBatch = 10000

// Feed returns up to limit events of an account's environment after the
// position after (0: from the oldest kept), in write order.
//
// On SQLite the position is the rowid: one writer commits transactions one
// after another and each takes max+1, so a later commit never adds a row
// below one already read. On PostgreSQL transactions commit in parallel
// and seq is taken at insert, not at commit, so positions are given by the
// reader instead (sequenceFeed).
func (s *Store) Feed(ctx context.Context, accountID string, env domain.Environment, after int64, limit int) ([]domain.FeedEvent, error) {
	pos := "rowid"
	if s.dialect == Postgres {
		pos = "feed_seq"
		if err := s.sequenceFeed(ctx, accountID, env); err != nil {
			return nil, err
		}
	}
	// The account's own alerts go to its account webhook, not to the feed
	// of messages and replies. A Twilio-compatible API's callback rides on
	// the feed's event of its step or reply (its form column); one written
	// as an event of its own (beside a msgsvc webhook of the same step, or
	// before the feed's events carried them) has Twilio's form as its
	// body, which the native feed does not speak.
	rows, err := s.rquery(ctx, `SELECT `+pos+`, `+eventCols+` FROM webhook_events WHERE account_id = $1 AND env = $2
		AND `+pos+` > $3 AND event NOT IN ($5, $6, $7, $8, $9) ORDER BY `+pos+` LIMIT $4`, accountID, env, after, limit,
		domain.EventBalanceLow, domain.EventSpendDaily, domain.EventTwilioStatus, domain.EventTwilioInbound,
		domain.EventFraudSuspected)
	if err != nil {
		return nil, fmt.Errorf("read events feed: %w", err)
	}
	defer rows.Close()
	out := []domain.FeedEvent{}
	for rows.Next() {
		var fe domain.FeedEvent
		if err := rows.Scan(events.dests(&fe.Event, []any{&fe.Pos})...); err != nil {
			return nil, fmt.Errorf("read events feed: %w", err)
		}
		out = append(out, fe)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read events feed: %w", err)
	}
	return out, nil
}

// sequenceFeed numbers the committed events of an account's environment
// that have no feed position yet, after the environment's head, in write
// order. The head's row lock makes readers take turns, and each sees every
// commit made before it got the lock, so a transaction that commits later
// can only be numbered later. It runs in its own transaction, outside the
// grouped writer: its lock then never waits inside a group that other
// writers wait for.
func (s *Store) sequenceFeed(ctx context.Context, accountID string, env domain.Environment) error {
	var pending bool
	err := s.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_events WHERE account_id = $1 AND env = $2
		AND feed_seq IS NULL)`, accountID, string(env)).Scan(&pending)
	if err != nil || !pending {
		return wrap("check events feed", err)
	}
	for attempt := 0; ; attempt++ {
		err = s.sequenceOnce(ctx, accountID, env)
		if err == nil || !retryable(err) || attempt == 4 {
			return wrap("number events feed", err)
		}
	}
}

func (s *Store) sequenceOnce(ctx context.Context, accountID string, env domain.Environment) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if _, err := tx.ExecContext(ctx, `INSERT INTO feed_heads (account_id, env, pos) VALUES ($1, $2, 0)
		ON CONFLICT (account_id, env) DO NOTHING`, accountID, string(env)); err != nil {
		return err
	}
	var head int64
	if err := tx.QueryRowContext(ctx, `SELECT pos FROM feed_heads WHERE account_id = $1 AND env = $2 FOR UPDATE`,
		accountID, string(env)).Scan(&head); err != nil {
		return err
	}
	// A new statement, so a new snapshot: it sees what the previous holder
	// of the lock numbered.
	var top sql.NullInt64
	err = tx.QueryRowContext(ctx, `WITH numbered AS (
			UPDATE webhook_events AS w SET feed_seq = $3 + v.rn
			FROM (SELECT id, row_number() OVER (ORDER BY seq) AS rn FROM webhook_events
				WHERE account_id = $1 AND env = $2 AND feed_seq IS NULL ORDER BY seq LIMIT $4) AS v
			WHERE w.id = v.id RETURNING w.feed_seq)
		SELECT MAX(feed_seq) FROM numbered`, accountID, string(env), head, feedSequenceBatch).Scan(&top)
	if err != nil {
		return err
	}
	if top.Valid {
		if _, err := tx.ExecContext(ctx, `UPDATE feed_heads SET pos = $3 WHERE account_id = $1 AND env = $2`,
			accountID, string(env), top.Int64); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// DeleteEventsBefore deletes up to limit events created before t that
// need no more delivery (delivered, given up, or written for the feed
// alone), with their delivery attempts, and returns how many. Pending
// events are left to their retries. On SQLite the newest event stays
// whatever its age: its rowid is the feed's head, and without it the next
// insert would take a position a reader has already passed.
func (s *Store) DeleteEventsBefore(ctx context.Context, t time.Time, limit int) (int, error) {
	keepNewest := ""
	if s.dialect == SQLite {
		keepNewest = ` AND rowid < (SELECT MAX(rowid) FROM webhook_events)`
	}
	var n int
	err := s.Write(ctx, func(tx *Tx) error {
		// An event's id starts with its creation time (id.New at
		// CreatedAt), so the primary key finds the old ones: no index of
		// its own on created_at, which every event would pay for.
		var ids []any
		var eventID string
		err := rowsOf(tx.query(ctx, `SELECT id FROM webhook_events WHERE id < $1 AND state <> $2`+keepNewest+`
			ORDER BY id LIMIT $3`, id.Floor(id.Event, t), domain.EventPending, limit)).scan(
			[]any{&eventID}, func() { ids = append(ids, eventID) })
		if err != nil || len(ids) == 0 {
			return err
		}
		in := tx.s.placeholders(1, len(ids))
		if _, err := tx.exec(ctx, `DELETE FROM webhook_attempts WHERE event_id IN (`+in+`)`, ids...); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, `DELETE FROM webhook_events WHERE id IN (`+in+`)`, ids...); err != nil {
			return err
		}
		n = len(ids)
		return nil
	})
	return n, wrap("delete old events", err)
}

// wrap adds context to an error; nil stays nil.
func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
