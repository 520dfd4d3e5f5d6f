package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"msgsvc/internal/id"
)

// Ledger entry kinds.
const (
	LedgerTopUp  = "topup"  // operator added credits
	LedgerDebit  = "debit"  // a message was accepted
	LedgerRefund = "refund" // a message was canceled or failed before a provider took it
	LedgerAdjust = "adjust" // operator correction
)

// LedgerEntry is one append-only line of an account's ledger. The balance
// always equals the sum of an account's entries.
type LedgerEntry struct {
	ID           string
	AccountID    string
	Amount       int64 // micro-credits; negative for debits
	BalanceAfter int64
	Kind         string
	MessageID    string
	CampaignID   string
	Note         string
	CreatedAt    time.Time
}

func newLedgerID(now time.Time) string { return id.New(id.Ledger, now) }

// InsertLedger appends entries in as few statements as possible.
func (tx *Tx) InsertLedger(ctx context.Context, entries []LedgerEntry) error {
	const cols = 9
	for start := 0; start < len(entries); start += 500 {
		chunk := entries[start:min(start+500, len(entries))]
		var b strings.Builder
		b.WriteString(`INSERT INTO ledger (id, account_id, amount, balance_after, kind, message_id, campaign_id, note, created_at) VALUES `)
		args := make([]any, 0, len(chunk)*cols)
		for i, e := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(" + tx.s.placeholders(i*cols+1, cols) + ")")
			args = append(args, e.ID, e.AccountID, e.Amount, e.BalanceAfter, e.Kind, e.MessageID, e.CampaignID, e.Note, ms(e.CreatedAt))
		}
		if _, err := tx.exec(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("insert ledger: %w", err)
		}
	}
	return nil
}

// Refund returns amount to the account for a message, with its ledger line.
func (tx *Tx) Refund(ctx context.Context, accountID, campaignID, messageID string, amount int64, note string) error {
	if amount <= 0 {
		return nil
	}
	bal, err := tx.adjustBalance(ctx, accountID, amount)
	if err != nil {
		return err
	}
	now := tx.s.now()
	return tx.InsertLedger(ctx, []LedgerEntry{{ID: newLedgerID(now), AccountID: accountID, Amount: amount,
		BalanceAfter: bal, Kind: LedgerRefund, MessageID: messageID, CampaignID: campaignID, Note: note, CreatedAt: now}})
}

// Ledger lists an account's entries, newest first, before the cursor id.
func (s *Store) Ledger(ctx context.Context, accountID, before string, limit int) ([]LedgerEntry, error) {
	query := `SELECT id, account_id, amount, balance_after, kind, message_id, campaign_id, note, created_at
		FROM ledger WHERE account_id = $1`
	args := []any{accountID}
	if before != "" {
		query += ` AND id < $3`
	}
	query += ` ORDER BY id DESC LIMIT $2`
	args = append(args, limit)
	if before != "" {
		args = append(args, before)
	}
	rows, err := s.rquery(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	defer rows.Close()
	var out []LedgerEntry
	for rows.Next() {
		var e LedgerEntry
		var at int64
		if err := rows.Scan(&e.ID, &e.AccountID, &e.Amount, &e.BalanceAfter, &e.Kind, &e.MessageID, &e.CampaignID, &e.Note, &at); err != nil {
			return nil, fmt.Errorf("scan ledger: %w", err)
		}
		e.CreatedAt = time.UnixMilli(at).UTC()
		out = append(out, e)
	}
	return out, rows.Err()
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
