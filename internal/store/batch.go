package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Statements shared by the tables that are written in batches and by the
// two leased queues (messages, webhook events), so that each is built in
// one place.

// insertRows writes rows, at most max rows a statement (see pieces), each
// statement ending with suffix (an ON CONFLICT clause, or nothing). A
// column of t.defaulted that is zero in every row of a statement is left
// to its DEFAULT rather than bound once per row. later sends the
// statements with the transaction's next round trip (see execLater); what
// names the rows in the error.
func insertRows[T any](ctx context.Context, tx *Tx, t table[T], rows []T, max int, suffix string, later bool, what string) error {
	n := len(t.names)
	for _, pc := range pieces(len(rows), max) {
		chunk := rows[pc[0]:pc[1]]
		all := make([]any, 0, len(chunk)*n)
		for i := range chunk {
			all = t.args(&chunk[i], all)
		}
		keep, omitted := t.kept(all)
		args := all
		if keep != nil {
			args = all[:0] // filtered in place: the write index never passes the read index
			for j, v := range all {
				if keep[j%n] {
					args = append(args, v)
				}
			}
		}
		query := tx.s.shape("insert "+t.name+suffix+omitted, len(chunk), func() string {
			list, per := t.list, n
			if keep != nil {
				var names []string
				for j, name := range t.names {
					if keep[j] {
						names = append(names, name)
					}
				}
				list, per = strings.Join(names, ", "), len(names)
			}
			var b strings.Builder
			b.WriteString(tx.s.multiWrite("INSERT") + ` INTO ` + t.name + ` (` + list + `) VALUES `)
			tx.s.writeValues(&b, len(chunk), per)
			b.WriteString(suffix)
			return b.String()
		})
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

// kept tells which columns an insert of these rows' values (all, row after
// row) must bind: all but the defaulted ones that are zero in every row.
// keep is nil when every column is bound; omitted names the left-out
// columns, for the statement's shape.
func (t table[T]) kept(all []any) (keep []bool, omitted string) {
	n := len(t.names)
	var b strings.Builder
	for j, d := range t.defaulted {
		if !d {
			continue
		}
		zero := true
		for i := j; i < len(all) && zero; i += n {
			zero = zeroArg(all[i])
		}
		if !zero {
			continue
		}
		if keep == nil {
			keep = make([]bool, n)
			for k := range keep {
				keep[k] = true
			}
		}
		keep[j] = false
		b.WriteString(" -" + t.names[j])
	}
	return keep, b.String()
}

// runLimit is a LIMIT taken from parameter n when the statement runs. A
// plain "LIMIT $n" has SQLite read the bound value while it compiles the
// statement (to plan for a small limit) and compile it again whenever a
// different value is bound: the claims bind as many as they have room
// for, which differs from one claim to the next, so each claim of the
// webhook events was compiled anew, a twenty-fifth of a node's CPU at
// low concurrency. SQLite does not look into a CAST.
func runLimit(n int) string { return "CAST($" + strconv.Itoa(n) + " AS INTEGER)" }

// claimDue leases up to limit due rows of a leased queue's table. The
// lease is expressed by moving next_attempt_at to the end of the lease: if
// the owner dies, its rows become due again without any rescue job. set
// adds to the UPDATE's SET list; where, when not empty, is a further
// condition a due row must meet (naming the table's columns by the
// table's name).
func claimDue[T any](ctx context.Context, s *Store, t table[T], set, where, owner string, now time.Time, lease time.Duration, limit int) ([]T, error) {
	lock := ""
	if s.dialect == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var out []T
	err := s.Write(ctx, func(tx *Tx) error {
		var err error
		out, err = t.scanAll(tx.query(ctx, `UPDATE `+t.name+` SET lease_owner = $1, next_attempt_at = $2`+set+`
			WHERE id IN (SELECT id FROM `+t.name+` WHERE next_attempt_at <= $3`+where+`
			ORDER BY next_attempt_at LIMIT `+runLimit(4)+lock+`) RETURNING `+t.list,
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
