package ledger

import (
	"context"
	"errors"
	"github.com/msgsvc/msgsvc/internal/id"
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
	// Transfer moved credits between a reseller and its child; the line
	// names the other account (Counterparty).
	Transfer Kind = "transfer"
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
	// Counterparty is the other account of a transfer ("" otherwise).
	Counterparty string
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
	// BalanceRose is told the balance a credit left, so that a low-balance
	// alert already posted is posted again at the next crossing once the
	// balance is back at or above the account's threshold.
	BalanceRose(ctx context.Context, accountID string, balance int64) error
}

// After is the balance a debit left, when one was made.
type After struct {
	Balance int64
	Debited bool
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
func Reserve(ctx context.Context, tx Tx, accountID, campaignID string, charges []Charge, at time.Time) (After, error) {
	var total int64
	for _, c := range charges {
		total += c.Amount
	}
	if total == 0 {
		return After{}, nil
	}
	balance, err := tx.AddBalance(ctx, accountID, -total, at)
	if err != nil {
		return After{}, err
	}
	running := balance + total
	return After{Balance: balance, Debited: true}, tx.InsertLedger(ctx, debitLines(make([]Entry, 0, len(charges)), accountID,
		Send{CampaignID: campaignID, Charges: charges, At: at}, &running))
}

// Send is one send's charges, for ReserveAll.
type Send struct {
	CampaignID string
	Charges    []Charge
	At         time.Time
}

// ReserveAll reserves several sends of one account, each all or nothing,
// as Reserve would one after the other, in as few statements as it can:
// when the balance covers them all, one balance update and one insert of
// lines serve every send. Otherwise each send is tried in turn and those
// the balance no longer covers are refused. It reports which sends were
// charged and the balance the last debit left.
func ReserveAll(ctx context.Context, tx Tx, accountID string, debits []Send) ([]bool, After, error) {
	charged := make([]bool, len(debits))
	totals := make([]int64, len(debits))
	var total int64
	var last time.Time
	for i, d := range debits {
		for _, c := range d.Charges {
			totals[i] += c.Amount
		}
		total += totals[i]
		if d.At.After(last) {
			last = d.At
		}
	}
	if total == 0 {
		for i := range charged {
			charged[i] = true
		}
		return charged, After{}, nil
	}
	var entries []Entry
	var after After
	balance, err := tx.AddBalance(ctx, accountID, -total, last)
	switch {
	case err == nil:
		after = After{Balance: balance, Debited: true}
		running := balance + total
		for i, d := range debits {
			charged[i] = true
			entries = debitLines(entries, accountID, d, &running)
		}
	case errors.Is(err, ErrInsufficientCredits):
		for i, d := range debits {
			if totals[i] == 0 {
				charged[i] = true
				continue
			}
			balance, err := tx.AddBalance(ctx, accountID, -totals[i], d.At)
			if errors.Is(err, ErrInsufficientCredits) {
				continue
			}
			if err != nil {
				return nil, After{}, err
			}
			charged[i] = true
			after = After{Balance: balance, Debited: true}
			running := balance + totals[i]
			entries = debitLines(entries, accountID, d, &running)
		}
	default:
		return nil, After{}, err
	}
	if len(entries) == 0 {
		return charged, after, nil
	}
	return charged, after, tx.InsertLedger(ctx, entries)
}

// Leg is what one send costs one account: a sub-account's send has a leg
// for itself and one for each account above it.
type Leg struct {
	AccountID string
	Send      Send
}

// ReserveLegs reserves sends that each cost several accounts (sends[i]
// are send i's legs), each send charged on every leg or on none: when one
// account does not cover its leg, what the others took for it is given
// back in the same transaction, with no line written, and the send is
// refused. accounts lists every account the legs name in the order their
// balances are debited (the tree's top first). That order alone cannot
// keep concurrent transactions from waiting on each other's rows in a
// cycle, since one transaction may run several sends one after the other;
// storage must lock an account's rows in an order of its own that holds
// across them (the store locks a tree's top before any row below it). As
// in ReserveAll, when every account covers the whole batch one
// balance update per account and one insert of lines serve it all. It
// reports which sends were charged and, per account debited, the balance
// its last debit left.
func ReserveLegs(ctx context.Context, tx Tx, accounts []string, sends [][]Leg) ([]bool, map[string]After, error) {
	pos := make(map[string]int, len(accounts))
	for i, a := range accounts {
		pos[a] = i
	}
	charged := make([]bool, len(sends))
	after := make(map[string]After, len(accounts))
	sums := make([]int64, len(accounts))
	var last time.Time
	for _, legs := range sends {
		for _, l := range legs {
			for _, c := range l.Send.Charges {
				sums[pos[l.AccountID]] += c.Amount
			}
			if l.Send.At.After(last) {
				last = l.Send.At
			}
		}
	}
	var entries []Entry
	ok, balances, err := debitLevels(ctx, tx, accounts, sums, last)
	if err != nil {
		return nil, nil, err
	}
	if ok {
		for k, a := range accounts {
			if sums[k] == 0 {
				continue
			}
			after[a] = After{Balance: balances[k], Debited: true}
			running := balances[k] + sums[k]
			for _, legs := range sends {
				for _, l := range legs {
					if l.AccountID == a {
						entries = debitLines(entries, a, l.Send, &running)
					}
				}
			}
		}
		for i := range charged {
			charged[i] = true
		}
	} else {
		one := make([]int64, len(accounts))
		for i, legs := range sends {
			clear(one)
			var at time.Time
			for _, l := range legs {
				for _, c := range l.Send.Charges {
					one[pos[l.AccountID]] += c.Amount
				}
				at = l.Send.At
			}
			ok, balances, err := debitLevels(ctx, tx, accounts, one, at)
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				continue
			}
			charged[i] = true
			for k, a := range accounts {
				if one[k] == 0 {
					continue
				}
				after[a] = After{Balance: balances[k], Debited: true}
				running := balances[k] + one[k]
				for _, l := range legs {
					if l.AccountID == a {
						entries = debitLines(entries, a, l.Send, &running)
					}
				}
			}
		}
	}
	if len(entries) == 0 {
		return charged, after, nil
	}
	return charged, after, tx.InsertLedger(ctx, entries)
}

// debitLevels takes amounts[l] from accounts[l], all or none: when a level
// is short, the levels already debited get their amounts back and it
// reports false. It returns the balance each debit left.
func debitLevels(ctx context.Context, tx Tx, accounts []string, amounts []int64, at time.Time) (bool, []int64, error) {
	balances := make([]int64, len(accounts))
	for l, a := range accounts {
		if amounts[l] == 0 {
			continue
		}
		b, err := tx.AddBalance(ctx, a, -amounts[l], at)
		if err == nil {
			balances[l] = b
			continue
		}
		if !errors.Is(err, ErrInsufficientCredits) {
			return false, nil, err
		}
		for k := l - 1; k >= 0; k-- {
			if amounts[k] == 0 {
				continue
			}
			if _, err := tx.AddBalance(ctx, accounts[k], amounts[k], at); err != nil {
				return false, nil, err
			}
		}
		return false, nil, nil
	}
	return true, balances, nil
}

// debitLines appends a send's debit lines, each with the balance it left.
func debitLines(out []Entry, accountID string, d Send, running *int64) []Entry {
	for _, c := range d.Charges {
		if c.Amount == 0 {
			continue
		}
		*running -= c.Amount
		out = append(out, Entry{ID: id.New(id.Ledger, d.At), AccountID: accountID, Amount: -c.Amount, BalanceAfter: *running,
			Kind: Debit, MessageID: c.MessageID, CampaignID: d.CampaignID, CreatedAt: d.At})
	}
	return out
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
	if err := tx.BalanceRose(ctx, accountID, balance); err != nil {
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
	if amount > 0 {
		if err := tx.BalanceRose(ctx, accountID, balance); err != nil {
			return 0, err
		}
	}
	return balance, tx.InsertLedger(ctx, []Entry{{ID: id.New(id.Ledger, at), AccountID: accountID, Amount: amount,
		BalanceAfter: balance, Kind: kind, Note: note, CreatedAt: at}})
}

// Move transfers amount (> 0) from one account to another: a debit line on
// from and a credit line on to, each naming the other, with the balances
// they left. from's balance never goes below zero: short, it returns
// ErrInsufficientCredits and the caller's transaction writes nothing.
func Move(ctx context.Context, tx Tx, from, to string, amount int64, note string, at time.Time) (fromBalance, toBalance int64, err error) {
	if amount <= 0 {
		return 0, 0, errors.New("ledger: a move takes a positive amount")
	}
	if fromBalance, err = tx.AddBalance(ctx, from, -amount, at); err != nil {
		return 0, 0, err
	}
	if toBalance, err = tx.AddBalance(ctx, to, amount, at); err != nil {
		return 0, 0, err
	}
	if err := tx.BalanceRose(ctx, to, toBalance); err != nil {
		return 0, 0, err
	}
	return fromBalance, toBalance, tx.InsertLedger(ctx, []Entry{
		{ID: id.New(id.Ledger, at), AccountID: from, Amount: -amount, BalanceAfter: fromBalance, Kind: Transfer, Note: note,
			Counterparty: to, CreatedAt: at},
		{ID: id.New(id.Ledger, at), AccountID: to, Amount: amount, BalanceAfter: toBalance, Kind: Transfer, Note: note,
			Counterparty: from, CreatedAt: at},
	})
}
