package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// uplineCol stores a message's charges above its sender as JSON, ” for
// none: a top-level account's message pays no encoding.
func uplineCol(name string, p *[]domain.Level) field { return field{name, (*uplineJSON)(p)} }

type uplineJSON []domain.Level

func (p *uplineJSON) arg() any  { return encodeUpline(*p) }
func (p *uplineJSON) dest() any { return p }

func (p *uplineJSON) Scan(src any) error {
	return scanNull(src, func(v sql.NullString) {
		*p = nil
		if v.String == "" {
			return
		}
		var ls []domain.Level
		if err := json.Unmarshal([]byte(v.String), &ls); err == nil {
			*p = ls
		}
	})
}

func encodeUpline(ls []domain.Level) string {
	if len(ls) == 0 {
		return ""
	}
	return jsonText(ls)
}

// Ancestors reads, inside the transaction, the accounts above accountID,
// parent first; none for a top-level account. The balances read are the
// rows' own (on PostgreSQL without the writers' shares): a send reads the
// chain for its prices, and debits go through AddBalance.
func (tx *Tx) Ancestors(ctx context.Context, accountID string) ([]domain.Account, error) {
	// The depth bound stops a cycle that a broken row could make.
	out, err := accounts.scanAll(tx.query(ctx, `WITH RECURSIVE up (id, depth) AS (
			SELECT parent_id, 1 FROM accounts WHERE id = $1 AND parent_id <> ''
			UNION ALL
			SELECT a.parent_id, up.depth + 1 FROM accounts a JOIN up ON a.id = up.id
			WHERE a.parent_id <> '' AND up.depth < $2)
		SELECT `+prefixed("a.", accounts.list)+` FROM up JOIN accounts a ON a.id = up.id ORDER BY up.depth`,
		accountID, domain.MaxDepth+1))
	if err != nil {
		return nil, fmt.Errorf("ancestors of %s: %w", accountID, err)
	}
	return out, nil
}
