package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Statements shared by the tables that are written in batches and by the
// two leased queues (messages, webhook events), so that each is built in
// one place.

// insertRows writes rows with every column of t, at most max rows a
// statement (see pieces), each statement ending with suffix (an ON
// CONFLICT clause, or nothing). later sends the statements with the
// transaction's next round trip (see execLater); what names the rows in
// the error.
func insertRows[T any](ctx context.Context, tx *Tx, t table[T], rows []T, max int, suffix string, later bool, what string) error {
	n := len(t.cols)
	for _, pc := range pieces(len(rows), max) {
		chunk := rows[pc[0]:pc[1]]
		query := tx.s.shape("insert "+t.name+suffix, len(chunk), func() string {
			var b strings.Builder
			b.WriteString(`INSERT INTO ` + t.name + ` (` + t.list + `) VALUES `)
			for i := range chunk {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString("(" + tx.s.placeholders(i*n+1, n) + ")")
			}
			b.WriteString(suffix)
			return b.String()
		})
		args := make([]any, 0, len(chunk)*n)
		for i := range chunk {
			args = t.args(&chunk[i], args)
		}
		var err error
		if later {
			err = tx.execLater(ctx, query, args...)
		} else {
			_, err = tx.exec(ctx, query, args...)
		}
		if err != nil {
			return fmt.Errorf("insert %s: %w", what, err)
		}
	}
	return nil
}

// claimDue leases up to limit due rows of a leased queue's table. The
// lease is expressed by moving next_attempt_at to the end of the lease: if
// the owner dies, its rows become due again without any rescue job. set
// adds to the UPDATE's SET list.
func claimDue[T any](ctx context.Context, s *Store, t table[T], set, owner string, now time.Time, lease time.Duration, limit int) ([]T, error) {
	lock := ""
	if s.dialect == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var out []T
	err := s.Write(ctx, func(tx *Tx) error {
		var err error
		out, err = t.scanAll(tx.query(ctx, `UPDATE `+t.name+` SET lease_owner = $1, next_attempt_at = $2`+set+`
			WHERE id IN (SELECT id FROM `+t.name+` WHERE next_attempt_at <= $3
			ORDER BY next_attempt_at LIMIT $4`+lock+`) RETURNING `+t.list,
			owner, ms(now.Add(lease)), ms(now), limit))
		return err
	})
	return out, err
}

// releaseLeases gives up an owner's lease on rows of a leased queue's
// table that it cannot handle now, making them due at once for any node.
// live is the condition of a row still in the queue.
func (s *Store) releaseLeases(ctx context.Context, table, live, owner string, ids []string, now time.Time) error {
	return s.Write(ctx, func(tx *Tx) error {
		return inChunks(ids, func(chunk []any) error {
			if _, err := tx.exec(ctx, `UPDATE `+table+` SET lease_owner = '', next_attempt_at = $2
				WHERE lease_owner = $1 AND `+live+` AND id IN (`+tx.s.placeholders(3, len(chunk))+`)`,
				append([]any{owner, ms(now)}, chunk...)...); err != nil {
				return fmt.Errorf("release %s: %w", table, err)
			}
			return nil
		})
	})
}
