package store

import (
	"context"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/ledger"
)

var ledgerLines = newTable("ledger", func(e *ledger.Entry, c cols) cols {
	return c.add(textCol("id", &e.ID), textCol("account_id", &e.AccountID), int64Col("amount", &e.Amount),
		int64Col("balance_after", &e.BalanceAfter), enumCol("kind", &e.Kind), textCol("message_id", &e.MessageID),
		textCol("campaign_id", &e.CampaignID), textCol("note", &e.Note), timeCol("created_at", &e.CreatedAt),
		textCol("counterparty", &e.Counterparty))
}).withDefaults("message_id", "campaign_id", "note", "counterparty")

// InsertLedger appends entries in as few statements as possible.
func (tx *Tx) InsertLedger(ctx context.Context, entries []ledger.Entry) error {
	return insertRows(ctx, tx, ledgerLines, entries, 256, "", true, "ledger")
}

// Ledger lists an account's entries, newest first, before the cursor id.
func (s *Store) Ledger(ctx context.Context, accountID, before string, limit int) ([]ledger.Entry, error) {
	query := `SELECT ` + ledgerLines.list + ` FROM ledger WHERE account_id = $1`
	args := []any{accountID, limit}
	if before != "" {
		query += ` AND ` + s.seq() + ` < (SELECT ` + s.seq() + ` FROM ledger WHERE id = $3)`
		args = append(args, before)
	}
	return ledgerLines.scanAll(s.rquery(ctx, query+` ORDER BY `+s.seq()+` DESC LIMIT $2`, args...))
}

// LedgerSum is the sum of an account's ledger; tests and audits compare it
// with the balance.
func (s *Store) LedgerSum(ctx context.Context, accountID string) (int64, error) {
	var sum int64
	err := s.rqueryRow(ctx, `SELECT COALESCE(SUM(amount), 0) FROM ledger WHERE account_id = $1`, accountID).Scan(&sum)
	if err != nil {
		return 0, fmt.Errorf("ledger sum: %w", err)
	}
	return sum, nil
}

// WriteLedger runs fn in a write transaction seen as the ledger's (ledger.Tx):
// callers that only move balances need not know the store's own type.
func (s *Store) WriteLedger(ctx context.Context, fn func(tx ledger.Tx) error) error {
	return s.Write(ctx, func(tx *Tx) error { return fn(tx) })
}
