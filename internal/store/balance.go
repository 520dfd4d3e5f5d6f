package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
)

// Balance shares (PostgreSQL). Each writer of a node keeps a share of an
// account's balance in balance_holds and debits it, so concurrent sends on
// any number of nodes never wait for one another's lock on the account
// row: a writer runs one transaction at a time, and its share is its own.
// A share that runs short is refilled from the account row with a part of
// what the row holds (refillDivisor), which takes the row's lock briefly
// and rarely. When the row itself runs short, the shares no transaction
// is using are gathered back into it; if the account as a whole still
// covers the debit, the rest sits in shares in use by transactions in
// flight, and the group is run again once they have ended (errBalanceBusy,
// waitShares) rather than refused. Credits (refunds, top-ups) go to the writer's
// share, or to the row when the writer has none (tools). The balance read
// anywhere is the row plus every share (accountList).
//
// Locks are taken so that no cycle can form: a transaction waits only for
// account rows and for its own writer's share (which only a gathering
// transaction, holding the row, can hold); gathering never waits for a
// share (SKIP LOCKED). Account rows are locked in one order within a tree:
// the row of the tree's top before any row below it (lockTree). Ordering
// the debits of one send top first is not enough, because the write queue
// runs several writes in one transaction, one after the other: a send
// that refilled a child's share and then another that needed the top's
// row held the child and waited for the top, while a transaction that
// had refilled the top's share waited for the child (PostgreSQL called it
// a deadlock, and the sends failed after the queue's retries). With the
// top always locked first, two transactions never each hold a row of the
// same tree. Locking the top costs a refill of a child one more row, and
// a top-level account nothing: it is its own top. The row is locked FOR NO KEY UPDATE, as an UPDATE of
// its balance locks it, never FOR UPDATE: every insert of a row naming the
// account (a message, a ledger line) holds a FOR KEY SHARE lock on it for
// its foreign key until its transaction ends, which FOR UPDATE waits for;
// two transactions that had each inserted such a row and then both wanted
// the row FOR UPDATE deadlocked.

// errBalanceBusy: the account covers a debit only with funds in shares that
// transactions in flight hold; the group runs again (retryable).
var errBalanceBusy = errors.New("balance held by transactions in flight")

// busyBalance is errBalanceBusy naming the account, whose shares in flight
// the group waits for before it runs again (waitShares).
type busyBalance struct{ account string }

func (e busyBalance) Error() string { return errBalanceBusy.Error() + " (" + e.account + ")" }
func (e busyBalance) Unwrap() error { return errBalanceBusy }

// waitShares waits, holding nothing, until the transactions in flight
// that hold shares of the account have ended, so that the group that found
// the account's credits in them runs again on their outcome: spent, and
// the debit is refused; or left over, and its gathering finds them idle
// unless their writers took them again meanwhile. Each share is read FOR
// SHARE in a transaction of its own, which ends as soon as the lock is
// granted: waiting with no other lock held, it can be part of no cycle.
func (s *Store) waitShares(ctx context.Context, accountID string) error {
	var holders []string
	var h string
	err := rowsOf(s.w.QueryContext(ctx, `SELECT holder FROM balance_holds WHERE account_id = $1 ORDER BY holder`, accountID)).scan(
		[]any{&h}, func() { holders = append(holders, h) })
	if err != nil {
		return fmt.Errorf("wait for balance shares: %w", err)
	}
	for _, h := range holders {
		if _, err := s.w.ExecContext(ctx, `SELECT 1 FROM balance_holds WHERE account_id = $1 AND holder = $2 FOR SHARE`,
			accountID, h); err != nil {
			return fmt.Errorf("wait for balance shares: %w", err)
		}
	}
	return nil
}

// refillDivisor: a refill takes the larger of the debit and this part of
// what the account row holds. Eight writers on each of a few nodes take
// most of a large balance in their first refills and then rarely come back.
const refillDivisor = 8

// heldTotal is the account's whole balance as this statement sees it:
// the row and the shares other than holder's (whose new amount the
// statement returns beside it).
const heldTotal = `(SELECT balance FROM accounts WHERE id = $1) +
	(SELECT COALESCE(SUM(amount), 0) FROM balance_holds WHERE account_id = $1 AND holder <> $2)`

func (tx *Tx) addHeld(ctx context.Context, accountID string, delta int64, at time.Time) (int64, error) {
	if tx.holder == "" {
		return tx.addToRow(ctx, accountID, delta, at)
	}
	if delta >= 0 {
		var total int64
		err := tx.queryRow(ctx, `INSERT INTO balance_holds (account_id, holder, amount, updated_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (account_id, holder) DO UPDATE SET amount = balance_holds.amount + excluded.amount,
			updated_at = excluded.updated_at RETURNING amount + `+heldTotal, accountID, tx.holder, delta, ms(at)).Scan(&total)
		if err != nil {
			return 0, fmt.Errorf("credit balance share: %w", err)
		}
		return total, nil
	}
	for attempt := 0; ; attempt++ {
		var total int64
		err := tx.queryRow(ctx, `UPDATE balance_holds SET amount = amount + $3, updated_at = $4
			WHERE account_id = $1 AND holder = $2 AND amount + $3 >= 0 RETURNING amount + `+heldTotal,
			accountID, tx.holder, delta, ms(at)).Scan(&total)
		if err == nil {
			return total, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("debit balance share: %w", err)
		}
		if attempt > 0 {
			return 0, errors.New("debit balance share: refilled share still short")
		}
		if err := tx.refill(ctx, accountID, -delta, at); err != nil {
			return 0, err
		}
	}
}

// refill moves at least need from the account row into the writer's
// share, gathering idle shares back into the row first if the row alone
// is short.
//
// The row is read and locked by a statement of its own, and the amount
// moved is computed from what that statement read: it is the row's latest
// version, and no other transaction can change it before this one ends.
// One statement that locked the row in a WITH and subtracted in another
// part of it could subtract an amount computed from a newer version than
// the one it subtracted from, and break the balance's CHECK when two
// nodes' writers refilled at once.
func (tx *Tx) refill(ctx context.Context, accountID string, need int64, at time.Time) error {
	for attempt := 0; attempt < 2; attempt++ {
		balance, err := tx.lockTree(ctx, accountID)
		if err != nil {
			return fmt.Errorf("refill balance share: %w", err)
		}
		if balance >= need {
			amount := min(balance, max(need, balance/refillDivisor))
			_, err := tx.exec(ctx, `WITH moved AS (UPDATE accounts SET balance = balance - $3 WHERE id = $1 RETURNING id)
				INSERT INTO balance_holds (account_id, holder, amount, updated_at) SELECT $1, $2, $3, $4 FROM moved
				ON CONFLICT (account_id, holder) DO UPDATE SET amount = balance_holds.amount + excluded.amount,
				updated_at = excluded.updated_at`, accountID, tx.holder, amount, ms(at))
			if err != nil {
				return fmt.Errorf("refill balance share: %w", err)
			}
			return nil
		}
		if attempt == 0 {
			if err := tx.gather(ctx, accountID); err != nil {
				return err
			}
		}
	}
	return tx.short(ctx, accountID, need)
}

// lockTreeQuery locks the row of the top of $1's tree, then $1's own
// (one row when $1 is at the top), and reads $1's balance. Rows are locked
// in the order they are sorted, after the sort.
var lockTreeQuery = `WITH RECURSIVE chain(id, parent_id, depth) AS (
		SELECT id, parent_id, 0 FROM accounts WHERE id = $1
		UNION ALL
		SELECT p.id, p.parent_id, c.depth + 1 FROM accounts p JOIN chain c ON p.id = c.parent_id
		WHERE c.parent_id <> '' AND c.depth < ` + fmt.Sprint(domain.MaxDepth+2) + `)
	SELECT a.id, a.balance FROM accounts a JOIN chain c ON a.id = c.id
	WHERE c.depth = 0 OR c.parent_id = '' ORDER BY c.depth DESC FOR NO KEY UPDATE OF a`

// lockTree locks accountID's row after the row of its tree's top (see
// above) and returns the row's balance, as the lock found it.
func (tx *Tx) lockTree(ctx context.Context, accountID string) (int64, error) {
	var balance int64
	found := false
	var rowID string
	var rowBalance int64
	err := rowsOf(tx.query(ctx, lockTreeQuery, accountID)).scan([]any{&rowID, &rowBalance}, func() {
		if rowID == accountID {
			balance, found = rowBalance, true
		}
	})
	if err != nil {
		return 0, fmt.Errorf("lock account: %w", err)
	}
	if !found {
		return 0, domain.ErrNotFound
	}
	return balance, nil
}

// gather moves the shares of the account that no other transaction is
// using back into its row (which it locks first).
func (tx *Tx) gather(ctx context.Context, accountID string) error {
	_, err := tx.exec(ctx, `WITH a AS (SELECT id FROM accounts WHERE id = $1 FOR NO KEY UPDATE),
		g AS (UPDATE balance_holds h SET amount = 0
			FROM (SELECT holder, amount FROM balance_holds WHERE account_id = $1 AND amount > 0
				AND EXISTS (SELECT 1 FROM a) FOR UPDATE SKIP LOCKED) old
			WHERE h.account_id = $1 AND h.holder = old.holder RETURNING old.amount)
		UPDATE accounts SET balance = balance + (SELECT COALESCE(SUM(amount), 0) FROM g)
		WHERE id = $1 AND EXISTS (SELECT 1 FROM g)`, accountID)
	if err != nil {
		return fmt.Errorf("gather balance shares: %w", err)
	}
	return nil
}

// short tells why a debit of need found too little: the account does not
// exist, or it is short, or (errBalanceBusy) what it lacks sits in shares
// that transactions in flight hold.
func (tx *Tx) short(ctx context.Context, accountID string, need int64) error {
	var total int64
	err := tx.queryRow(ctx, `SELECT balance + (SELECT COALESCE(SUM(amount), 0) FROM balance_holds WHERE account_id = $1)
		FROM accounts WHERE id = $1`, accountID).Scan(&total)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return domain.ErrNotFound
	case err != nil:
		return fmt.Errorf("read balance: %w", err)
	case total >= need:
		return busyBalance{accountID}
	}
	return ledger.ErrInsufficientCredits
}

// addToRow changes the account row itself (a writer without a share: the
// command-line tools), gathering the shares when a debit finds it short.
func (tx *Tx) addToRow(ctx context.Context, accountID string, delta int64, at time.Time) (int64, error) {
	if _, err := tx.lockTree(ctx, accountID); err != nil {
		return 0, fmt.Errorf("adjust balance: %w", err)
	}
	for attempt := 0; attempt < 2; attempt++ {
		var total int64
		err := tx.queryRow(ctx, `UPDATE accounts SET balance = balance + $2, balance_updated_at = $3
			WHERE id = $1 AND balance + $2 >= 0
			RETURNING balance + (SELECT COALESCE(SUM(amount), 0) FROM balance_holds WHERE account_id = $1)`,
			accountID, delta, ms(at)).Scan(&total)
		if err == nil {
			return total, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("adjust balance: %w", err)
		}
		if attempt == 0 {
			if err := tx.gather(ctx, accountID); err != nil {
				return 0, err
			}
		}
	}
	return 0, tx.short(ctx, accountID, -delta)
}

// accountList is the column list of an account read, its columns
// qualified with alias. On PostgreSQL the balance is the row's plus its
// shares, and it was last updated when the row or any share was.
func (s *Store) accountList(alias string) string {
	list := prefixed(alias+".", accounts.list)
	list = strings.Replace(list, ", "+alias+".fraud", ", "+s.fraudSelect(alias), 1)
	if s.dialect != Postgres {
		return list
	}
	shares := `(SELECT %s FROM balance_holds h WHERE h.account_id = ` + alias + `.id)`
	list = strings.Replace(list, alias+".balance,", alias+".balance + COALESCE("+fmt.Sprintf(shares, "SUM(h.amount)")+", 0),", 1)
	return strings.Replace(list, alias+".balance_updated_at,", "GREATEST("+alias+".balance_updated_at, "+
		fmt.Sprintf(shares, "MAX(h.updated_at)")+"),", 1)
}
