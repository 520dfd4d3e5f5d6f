package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
)

// The account tree: each account names its parent (parent_id, '' at the
// top), at most domain.MaxDepth levels deep. The chain above an account is
// read with one recursive query, which both dialects run; its bound keeps
// a damaged row that named itself from looping.

// chainQuery lists the account $1 (depth 0) and those above it, nearest
// first.
func (s *Store) chainQuery() string {
	return `WITH RECURSIVE chain(id, parent_id, depth) AS (
		SELECT id, parent_id, 0 FROM accounts WHERE id = $1
		UNION ALL
		SELECT p.id, p.parent_id, c.depth + 1 FROM accounts p JOIN chain c ON p.id = c.parent_id
		WHERE c.parent_id <> '' AND c.depth < ` + fmt.Sprint(domain.MaxDepth+2) + `)
	SELECT ` + s.accountList("a") + ` FROM chain c JOIN accounts a ON a.id = c.id ORDER BY c.depth`
}

// subtreeQuery lists the accounts below $1, shallowest first.
func (s *Store) subtreeQuery() string {
	return `WITH RECURSIVE below(id, depth) AS (
		SELECT id, 1 FROM accounts WHERE parent_id = $1 AND parent_id <> ''
		UNION ALL
		SELECT a.id, b.depth + 1 FROM accounts a JOIN below b ON a.parent_id = b.id WHERE b.depth < ` + fmt.Sprint(domain.MaxDepth+2) + `)
	SELECT ` + s.accountList("a") + ` FROM below b JOIN accounts a ON a.id = b.id ORDER BY b.depth, a.created_at, a.id`
}

// ancestorsOf drops the account itself from its chain; an unknown account
// is not found.
func ancestorsOf(chain []domain.Account, err error) ([]domain.Account, error) {
	if err != nil {
		return nil, fmt.Errorf("read account chain: %w", err)
	}
	if len(chain) == 0 {
		return nil, domain.ErrNotFound
	}
	return chain[1:], nil
}

// Children lists the accounts made directly under parentID, oldest first.
func (s *Store) Children(ctx context.Context, parentID string) ([]domain.Account, error) {
	if parentID == "" {
		return nil, nil
	}
	return accounts.scanAll(s.rquery(ctx, `SELECT `+s.accountList("a")+` FROM accounts a WHERE a.parent_id = $1
		ORDER BY a.created_at, a.id`, parentID))
}

// Subtree lists every account below rootID (not rootID itself), children
// before grandchildren.
func (s *Store) Subtree(ctx context.Context, rootID string) ([]domain.Account, error) {
	return accounts.scanAll(s.rquery(ctx, s.subtreeQuery(), rootID))
}

// Ancestors lists the accounts above accountID, its parent first and the
// top of its tree last; empty for a top-level account, domain.ErrNotFound
// for an unknown one.
func (s *Store) Ancestors(ctx context.Context, accountID string) ([]domain.Account, error) {
	return ancestorsOf(accounts.scanAll(s.rquery(ctx, s.chainQuery(), accountID)))
}

// InSubtree reports whether accountID is rootID or stands below it. An
// unknown accountID is in no subtree.
func (s *Store) InSubtree(ctx context.Context, rootID, accountID string) (bool, error) {
	if rootID == "" || accountID == "" {
		return false, nil
	}
	if rootID == accountID {
		var one int
		err := s.rqueryRow(ctx, `SELECT 1 FROM accounts WHERE id = $1`, accountID).Scan(&one)
		if isNoRows(err) {
			return false, nil
		}
		return err == nil, err
	}
	above, err := s.Ancestors(ctx, accountID)
	if errors.Is(err, domain.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, a := range above {
		if a.ID == rootID {
			return true, nil
		}
	}
	return false, nil
}

// CreateChild inserts a new account under a.ParentID, with a zero balance
// (its parent funds it with Transfer). The parent must exist
// (domain.ErrNotFound), be a reseller (domain.ErrNotReseller) and stand
// above the deepest level (domain.ErrTreeTooDeep); the check and the
// insert are one transaction. A child of a suspended parent is born
// suspended by the same account.
func (s *Store) CreateChild(ctx context.Context, a domain.Account) error {
	if a.ParentID == "" {
		return errors.New("create child: no parent named")
	}
	a.Balance, a.BalanceUpdatedAt = 0, a.CreatedAt
	return s.Write(ctx, func(tx *Tx) error {
		chain, err := accounts.scanAll(tx.query(ctx, s.chainQuery(), a.ParentID))
		if err != nil {
			return fmt.Errorf("read parent chain: %w", err)
		}
		switch {
		case len(chain) == 0:
			return fmt.Errorf("parent %s: %w", a.ParentID, domain.ErrNotFound)
		case !chain[0].Reseller:
			return fmt.Errorf("parent %s: %w", a.ParentID, domain.ErrNotReseller)
		case len(chain) >= domain.MaxDepth: // the parent's depth; the child would be one more
			return fmt.Errorf("parent %s: %w", a.ParentID, domain.ErrTreeTooDeep)
		case a.Reseller && len(chain)+1 >= domain.MaxDepth: // as SetReseller, checked before anything is written
			return fmt.Errorf("reseller under %s: %w", a.ParentID, domain.ErrTreeTooDeep)
		}
		// A suspension is written on every account of the suspended
		// subtree, so a child made under a suspended parent carries it
		// too, naming the same account, or it would send while its parent
		// may not.
		if p := chain[0]; p.Suspended() {
			a.SuspendedAt, a.SuspendedBy = p.SuspendedAt, p.SuspendedBy
		}
		if _, err := tx.exec(ctx, accounts.insert(s), accounts.args(&a, nil)...); err != nil {
			return fmt.Errorf("create child account: %w", err)
		}
		return nil
	})
}

// SetReseller marks an account a reseller or not. An account at the
// deepest level may not become one (domain.ErrTreeTooDeep: its children
// could not exist), and one with children may not stop being one
// (domain.ErrHasChildren).
func (s *Store) SetReseller(ctx context.Context, accountID string, reseller bool) error {
	return s.Write(ctx, func(tx *Tx) error {
		chain, err := accounts.scanAll(tx.query(ctx, s.chainQuery(), accountID))
		if err != nil {
			return fmt.Errorf("read account chain: %w", err)
		}
		if len(chain) == 0 {
			return domain.ErrNotFound
		}
		if reseller && len(chain) >= domain.MaxDepth {
			return domain.ErrTreeTooDeep
		}
		if !reseller {
			var one int
			err := tx.queryRow(ctx, `SELECT 1 FROM accounts WHERE parent_id = $1 LIMIT 1`, accountID).Scan(&one)
			if err == nil {
				return domain.ErrHasChildren
			}
			if !isNoRows(err) {
				return fmt.Errorf("read children: %w", err)
			}
		}
		_, err = tx.exec(ctx, `UPDATE accounts SET reseller = $2 WHERE id = $1`, accountID, boolInt(reseller))
		if err != nil {
			return fmt.Errorf("set reseller: %w", err)
		}
		return nil
	})
}

// SetBilling sets when an account's messages are charged for good.
func (s *Store) SetBilling(ctx context.Context, accountID string, b domain.Billing) error {
	res, err := s.wexec(ctx, `UPDATE accounts SET billing = $2 WHERE id = $1`, accountID, string(b))
	return affectedOne(res, err, "set billing")
}

// Transfer moves amount micro-credits from parentID to its child childID
// (a negative amount takes them back), in one transaction, with a ledger
// line on each side naming the other. It returns both balances after it.
// childID must be parentID's child (domain.ErrNotFound otherwise). Neither
// balance goes below zero: a parent short of the amount is
// ledger.ErrInsufficientCredits, a child short of what is taken back
// domain.ErrChildShort; either way nothing is written. A transfer that
// keeps conflicting with other writers gives up with
// domain.ErrStorageUnavailable, also having written nothing.
func (s *Store) Transfer(ctx context.Context, parentID, childID string, amount int64, note string, at time.Time) (parentBalance, childBalance int64, err error) {
	if amount == 0 {
		return 0, 0, errors.New("transfer: zero amount")
	}
	// The write queue runs a group again a few times after a conflict
	// with other writers (a deadlock, or the credits a debit needs held
	// in other writers' shares). A burst of sends on every node can make
	// that last longer than for a send, so a transfer waits a little
	// more; if the conflict outlasts it, nothing was moved and the caller
	// is told to retry (domain.ErrStorageUnavailable), as for a database
	// that cannot take writes.
	for attempt := 1; ; attempt++ {
		parentBalance, childBalance, err = s.transferOnce(ctx, parentID, childID, amount, note, at)
		if err == nil || !retryable(err) {
			return parentBalance, childBalance, err
		}
		if attempt == transferAttempts {
			return 0, 0, fmt.Errorf("transfer: still conflicting with other writers (%w): %w", err, domain.ErrStorageUnavailable)
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(time.Duration(attempt) * 20 * time.Millisecond):
		}
	}
}

// transferAttempts bounds the runs of a transfer that keeps conflicting
// with other writers (each run is itself up to five of the write queue's).
const transferAttempts = 6

func (s *Store) transferOnce(ctx context.Context, parentID, childID string, amount int64, note string, at time.Time) (parentBalance, childBalance int64, err error) {
	err = s.Write(ctx, func(tx *Tx) error {
		var parent string
		err := tx.queryRow(ctx, `SELECT parent_id FROM accounts WHERE id = $1`, childID).Scan(&parent)
		if isNoRows(err) || (err == nil && (parent != parentID || parent == "")) {
			return domain.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("read child: %w", err)
		}
		if amount > 0 {
			parentBalance, childBalance, err = ledger.Move(ctx, tx, parentID, childID, amount, note, at)
			return err
		}
		childBalance, parentBalance, err = ledger.Move(ctx, tx, childID, parentID, -amount, note, at)
		if errors.Is(err, ledger.ErrInsufficientCredits) {
			return domain.ErrChildShort
		}
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	return parentBalance, childBalance, nil
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// ResellerMargins is a reseller's margin per child over the live messages
// a provider took, created from the day of from to the day of to (UTC,
// inclusive): for each child, Price is what the child was charged for the
// messages of its subtree (refunds deducted), Cost what the reseller was
// charged for the same messages, both read from their ledgers, and the
// counts are those messages'. Key is the child's id; a child without
// messages has a row of zeros.
func (s *Store) ResellerMargins(ctx context.Context, resellerID string, from, to time.Time) ([]domain.MarginRow, error) {
	kids, err := s.Children(ctx, resellerID)
	if err != nil {
		return nil, fmt.Errorf("reseller margins: %w", err)
	}
	lo := id.Floor(id.Message, from.UTC().Truncate(24*time.Hour))
	hi := id.Floor(id.Message, to.UTC().Truncate(24*time.Hour).Add(24*time.Hour))
	const taken = `m.id >= $1 AND m.id < $2 AND m.env = 'live' AND m.sent_at IS NOT NULL`
	out := make([]domain.MarginRow, 0, len(kids))
	for _, k := range kids {
		below, err := s.Subtree(ctx, k.ID)
		if err != nil {
			return nil, fmt.Errorf("reseller margins: %w", err)
		}
		senders := append([]string{k.ID}, accountIDs(below)...)
		in := s.placeholders(4, len(senders))
		row := domain.MarginRow{Key: k.ID}
		err = s.rqueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(segments), 0),
			COALESCE(SUM(CASE WHEN status IN ('DELIVERED', 'READ', 'FAILED') THEN 1 ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN status IN ('DELIVERED', 'READ') THEN 1 ELSE 0 END), 0)
			FROM messages m WHERE `+taken+` AND m.account_id IN (`+s.placeholders(3, len(senders))+`)`,
			append([]any{lo, hi}, toAny(senders)...)...).Scan(
			&row.Messages, &row.Segments, &row.Final, &row.Delivered)
		if err != nil {
			return nil, fmt.Errorf("reseller margins: %w", err)
		}
		// What an account paid for those messages is minus the sum of its
		// lines naming them (debits, and the refunds that undo them).
		paid := func(account string) (int64, error) {
			var sum int64
			err := s.rqueryRow(ctx, `SELECT COALESCE(SUM(l.amount), 0) FROM ledger l JOIN messages m ON m.id = l.message_id
				WHERE l.account_id = $3 AND l.message_id <> '' AND `+taken+` AND m.account_id IN (`+in+`)`,
				append([]any{lo, hi, account}, toAny(senders)...)...).Scan(&sum)
			return -sum, err
		}
		if row.Price, err = paid(k.ID); err != nil {
			return nil, fmt.Errorf("reseller margins: %w", err)
		}
		if row.Cost, err = paid(resellerID); err != nil {
			return nil, fmt.Errorf("reseller margins: %w", err)
		}
		out = append(out, row)
	}
	return out, nil
}

func accountIDs(list []domain.Account) []string {
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a.ID
	}
	return out
}

func toAny(v []string) []any {
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	return out
}
