package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// A suspension is written on every account of the suspended subtree, so
// that whatever reads one account (a key's lookup, a bind, the dispatch
// claim) sees it in that account's own row; suspended_by names the account
// whose suspension it is. Each write moves the auth counter (the accounts
// trigger), so every node's key and credential caches drop the subtree's
// accounts at once and the SMPP server re-reads its bound accounts.

// SuspendSubtree suspends an account and every account below it, in one
// transaction. A row already suspended from inside the subtree (by the
// account itself or one below it) keeps that suspension, so that resuming
// this one leaves it; a row suspended from above is taken over, so that
// resuming the account above leaves this one standing.
func (s *Store) SuspendSubtree(ctx context.Context, accountID string, at time.Time) error {
	return s.Write(ctx, func(tx *Tx) error {
		rows, err := tx.subtree(ctx, accountID)
		if err != nil {
			return err
		}
		inside := make(map[string]bool, len(rows))
		for _, r := range rows {
			inside[r.id] = true
		}
		for _, r := range rows {
			if r.by != "" && inside[r.by] {
				continue
			}
			since := r.at
			if since == 0 {
				since = ms(at)
			}
			if err := tx.execLater(ctx, `UPDATE accounts SET suspended_at = $2, suspended_by = $3 WHERE id = $1`,
				r.id, since, accountID); err != nil {
				return fmt.Errorf("suspend account: %w", err)
			}
		}
		return nil
	})
}

// ResumeSubtree lifts the suspension an account made: the accounts of its
// subtree suspended by it go back to the suspension of its parent when
// the parent is suspended itself, and are cleared otherwise. Suspensions
// made by accounts below it stay.
func (s *Store) ResumeSubtree(ctx context.Context, accountID string) error {
	return s.Write(ctx, func(tx *Tx) error {
		rows, err := tx.subtree(ctx, accountID)
		if err != nil {
			return err
		}
		var at int64
		by := ""
		if parent := rows[0].parent; parent != "" {
			if err := tx.queryRow(ctx, `SELECT suspended_at, suspended_by FROM accounts WHERE id = $1`, parent).Scan(&at, &by); err != nil {
				return fmt.Errorf("read the parent's suspension: %w", err)
			}
		}
		for _, r := range rows {
			if r.by != accountID {
				continue
			}
			if err := tx.execLater(ctx, `UPDATE accounts SET suspended_at = $2, suspended_by = $3 WHERE id = $1`,
				r.id, at, by); err != nil {
				return fmt.Errorf("resume account: %w", err)
			}
		}
		return nil
	})
}

// subRow is an account of a subtree with its suspension as stored.
type subRow struct {
	id, parent, by string
	at             int64
}

// subtree lists an account and every account below it, top first, read
// level by level through parent_id (the tree is at most domain.MaxDepth
// deep, so this is a handful of reads), locking the rows on PostgreSQL
// so that two suspensions of overlapping subtrees take turns. An unknown
// account is domain.ErrNotFound. The tree's general readers (Children,
// InSubtree) live with the tree; suspension needs the list, with each
// row's suspension, inside its own transaction.
func (tx *Tx) subtree(ctx context.Context, rootID string) ([]subRow, error) {
	lock := ""
	if tx.pg != nil {
		lock = " FOR UPDATE"
	}
	var r subRow
	err := tx.queryRow(ctx, `SELECT id, parent_id, suspended_by, suspended_at FROM accounts WHERE id = $1`+lock, rootID).
		Scan(&r.id, &r.parent, &r.by, &r.at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, domain.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read account: %w", err)
	}
	all := []subRow{r}
	level := []string{rootID}
	// One level more than the deepest tree allowed, so that a tree made
	// deeper by hand is still suspended whole down to that depth.
	for depth := 0; depth <= domain.MaxDepth && len(level) > 0; depth++ {
		var next []string
		err := inChunks(level, func(chunk []any) error {
			return rowsOf(tx.query(ctx, `SELECT id, parent_id, suspended_by, suspended_at FROM accounts
				WHERE parent_id IN (`+tx.s.placeholders(1, len(chunk))+`) ORDER BY id`+lock, chunk...)).
				scan([]any{&r.id, &r.parent, &r.by, &r.at}, func() {
					all = append(all, r)
					next = append(next, r.id)
				})
		})
		if err != nil {
			return nil, fmt.Errorf("read children: %w", err)
		}
		level = next
	}
	return all, nil
}
