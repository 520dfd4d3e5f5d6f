package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// uplineCol stores a message's charges above its sender as text, one
// level after the other ("id,charged,sms,rcs;…", parent first), empty for
// none: a top-level account's message pays nothing for it, and a
// sub-account's is encoded and read back without reflection, since every
// status update of the message compares it.
func uplineCol(name string, p *[]domain.Level) field { return field{name, (*uplineText)(p)} }

type uplineText []domain.Level

func (p *uplineText) arg() any  { return encodeUpline(*p) }
func (p *uplineText) dest() any { return p }

func (p *uplineText) Scan(src any) error {
	var err error
	scanErr := scanNull(src, func(v sql.NullString) { *p, err = decodeUpline(v.String) })
	if scanErr != nil {
		return scanErr
	}
	return err
}

func encodeUpline(ls []domain.Level) string {
	if len(ls) == 0 {
		return ""
	}
	b := make([]byte, 0, len(ls)*48)
	for i, l := range ls {
		if i > 0 {
			b = append(b, ';')
		}
		b = append(b, l.AccountID...)
		for _, v := range [...]int64{l.Charged, l.SMS, l.RCS} {
			b = append(b, ',')
			b = strconv.AppendInt(b, v, 10)
		}
	}
	return string(b)
}

func decodeUpline(s string) ([]domain.Level, error) {
	if s == "" {
		return nil, nil
	}
	out := make([]domain.Level, 0, strings.Count(s, ";")+1)
	for s != "" {
		var level string
		level, s, _ = strings.Cut(s, ";")
		var l domain.Level
		var ok bool
		if l.AccountID, level, ok = strings.Cut(level, ","); !ok || l.AccountID == "" {
			return nil, fmt.Errorf("upline %q: a level without its account", level)
		}
		for _, v := range [...]*int64{&l.Charged, &l.SMS, &l.RCS} {
			var num string
			num, level, _ = strings.Cut(level, ",")
			n, err := strconv.ParseInt(num, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("upline: %w", err)
			}
			*v = n
		}
		out = append(out, l)
	}
	return out, nil
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
