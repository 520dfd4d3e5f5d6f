package store

import (
	"context"
	"fmt"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
)

// The operator's console reads: statements, the ledger and messages in
// pages for exports, and messages across accounts.

// Statement sums an account's ledger over [from, to): the opening and
// closing balances are sums of the lines before each bound, each kind of
// line is summed apart, and the debit lines are grouped by the channel
// and calling code of the message they charged. The closing balance is
// read on its own, not derived from the parts, so that a caller can check
// that the parts add up to it.
func (s *Store) Statement(ctx context.Context, accountID string, from, to time.Time) (ledger.Statement, error) {
	st := ledger.Statement{AccountID: accountID, From: from, To: to}
	err := s.rqueryRow(ctx, `SELECT COALESCE(SUM(CASE WHEN created_at < $2 THEN amount ELSE 0 END), 0),
		COALESCE(SUM(amount), 0) FROM ledger WHERE account_id = $1 AND created_at < $3`,
		accountID, ms(from), ms(to)).Scan(&st.Opening, &st.Closing)
	if err != nil {
		return st, fmt.Errorf("statement balances: %w", err)
	}
	var kind string
	var sum int64
	err = rowsOf(s.rquery(ctx, `SELECT kind, SUM(amount) FROM ledger WHERE account_id = $1 AND created_at >= $2
		AND created_at < $3 AND kind <> 'debit' GROUP BY kind ORDER BY kind`, accountID, ms(from), ms(to))).scan([]any{&kind, &sum}, func() {
		switch ledger.Kind(kind) {
		case ledger.TopUp, ledger.Adjust:
			st.TopUps += sum
		case ledger.Transfer:
			st.Transfers += sum
		case ledger.Refund:
			st.Refunds += sum
		default:
			// A kind this statement does not know stays out of its
			// parts; the caller's check of the closing balance shows it.
		}
	})
	if err != nil {
		return st, fmt.Errorf("statement kinds: %w", err)
	}
	// A message's row may be gone (retention deletes none today, but a
	// line must never vanish from a statement): its charge is kept under
	// an empty channel and country.
	var c ledger.ChargeLine
	err = rowsOf(s.rquery(ctx, `SELECT COALESCE(m.channel, ''), COALESCE(m.country_code, ''), COUNT(*),
		COALESCE(SUM(m.segments), 0), -SUM(l.amount) FROM ledger l LEFT JOIN messages m ON m.id = l.message_id
		WHERE l.account_id = $1 AND l.kind = 'debit' AND l.created_at >= $2 AND l.created_at < $3
		GROUP BY 1, 2 ORDER BY 1, 2`, accountID, ms(from), ms(to))).scan(
		[]any{&c.Channel, &c.Country, &c.Messages, &c.Segments, &c.Amount}, func() { st.Charges = append(st.Charges, c) })
	if err != nil {
		return st, fmt.Errorf("statement charges: %w", err)
	}
	return st, nil
}

// LedgerRange lists an account's ledger lines written in [from, to), in
// write order, after the line id after ("" for the first), at most limit:
// an export reads the ledger a page at a time.
func (s *Store) LedgerRange(ctx context.Context, accountID string, from, to time.Time, after string, limit int) ([]ledger.Entry, error) {
	query := `SELECT ` + ledgerLines.list + ` FROM ledger WHERE account_id = $1 AND created_at >= $2 AND created_at < $3`
	args := []any{accountID, ms(from), ms(to), limit}
	if after != "" {
		query += ` AND ` + s.seq() + ` > (SELECT ` + s.seq() + ` FROM ledger WHERE id = $5)`
		args = append(args, after)
	}
	return ledgerLines.scanAll(s.rquery(ctx, query+` ORDER BY `+s.seq()+` LIMIT $4`, args...))
}

// SearchAllMessages lists the messages of every account matching f (its
// AccountID is not read), newest first by id (ids begin with their
// creation time; the primary key serves the order, so no index is added
// to the hot path of sends), before the message id f.Before, at most Limit
// (1 to 1001, else 100). A phone search across accounts walks that key:
// a time window keeps it short.
func (s *Store) SearchAllMessages(ctx context.Context, f domain.MessageFilter) ([]domain.Message, error) {
	query, args := messageFilter(`SELECT `+messageCols+` FROM messages WHERE 1 = 1`, nil, f)
	if f.Before != "" {
		args = append(args, f.Before)
		query += fmt.Sprintf(" AND id < $%d", len(args))
	}
	args = append(args, searchLimit(f.Limit))
	query += fmt.Sprintf(" ORDER BY id DESC LIMIT $%d", len(args))
	return messages.scanAll(s.rquery(ctx, query, args...))
}
