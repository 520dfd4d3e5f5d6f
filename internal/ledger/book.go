package ledger

import (
	"context"
	"errors"
	"msgsvc/internal/id"
	"time"
)

// ErrInsufficientCredits: the balance does not cover a debit. The balance
// never goes below zero.
var ErrInsufficientCredits = errors.New("insufficient credits")

// Kind says why a ledger line moved the balance.
type Kind string

// Ledger line kinds.
const (
	TopUp  Kind = "topup"  // an operator added credits
	Debit  Kind = "debit"  // a message was accepted (its reserve)
	Refund Kind = "refund" // a message ended before a provider took it, or cost less than reserved
	Adjust Kind = "adjust" // an operator's correction
)

// Entry is one append-only line of an account's ledger. The balance always
// equals the sum of an account's entries, and every line names its message
// or the operator's action.
type Entry struct {
	ID           string
	AccountID    string
	Amount       int64 // micro-credits; negative for debits
	BalanceAfter int64
	Kind         Kind
	MessageID    string
	CampaignID   string
	Note         string
	CreatedAt    time.Time
}

// Tx is the write transaction the ledger keeps its books in; storage
// implements it, and decides nothing: the ledger says what to write.
type Tx interface {
	// AddBalance adds delta to the account's balance and returns the new
	// balance, or ErrInsufficientCredits (changing nothing) when the
	// balance would go below zero. It must be atomic under concurrency.
	AddBalance(ctx context.Context, accountID string, delta int64, at time.Time) (int64, error)
	InsertLedger(ctx context.Context, entries []Entry) error
}

// Charge is what one message costs its account.
type Charge struct {
	MessageID string
	Amount    int64 // micro-credits; 0 for test keys
}

// Reserve debits a send's messages in one balance update, all or nothing:
// with too little balance it returns ErrInsufficientCredits and writes
// nothing. Each charged message gets its own line, with the running
// balance after it.
func Reserve(ctx context.Context, tx Tx, accountID, campaignID string, charges []Charge, at time.Time) error {
	var total int64
	for _, c := range charges {
		total += c.Amount
	}
	if total == 0 {
		return nil
	}
	balance, err := tx.AddBalance(ctx, accountID, -total, at)
	if err != nil {
		return err
	}
	entries := make([]Entry, 0, len(charges))
	running := balance + total
	for _, c := range charges {
		if c.Amount == 0 {
			continue
		}
		running -= c.Amount
		entries = append(entries, Entry{ID: id.New(id.Ledger, at), AccountID: accountID, Amount: -c.Amount, BalanceAfter: running,
			Kind: Debit, MessageID: c.MessageID, CampaignID: campaignID, CreatedAt: at})
	}
	return tx.InsertLedger(ctx, entries)
}

// Return gives amount back to the account for one message, with its line.
func Return(ctx context.Context, tx Tx, accountID, campaignID, messageID string, amount int64, note string, at time.Time) error {
	if amount <= 0 {
		return nil
	}
	balance, err := tx.AddBalance(ctx, accountID, amount, at)
	if err != nil {
		return err
	}
	return tx.InsertLedger(ctx, []Entry{{ID: id.New(id.Ledger, at), AccountID: accountID, Amount: amount, BalanceAfter: balance,
		Kind: Refund, MessageID: messageID, CampaignID: campaignID, Note: note, CreatedAt: at}})
}

// Credit records an operator's top-up (amount > 0) or correction (either
// sign) and returns the new balance. A debit larger than the balance fails
// with ErrInsufficientCredits.
func Credit(ctx context.Context, tx Tx, accountID string, amount int64, kind Kind, note string, at time.Time) (int64, error) {
	balance, err := tx.AddBalance(ctx, accountID, amount, at)
	if err != nil {
		return 0, err
	}
	return balance, tx.InsertLedger(ctx, []Entry{{ID: id.New(id.Ledger, at), AccountID: accountID, Amount: amount,
		BalanceAfter: balance, Kind: kind, Note: note, CreatedAt: at}})
}
