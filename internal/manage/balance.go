package manage

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/user"
)

// BalanceStore is what balances, top-ups, the ledger and usage need from storage; a top-up runs the book (ledger.Credit) in a write transaction of its own.
type BalanceStore interface {
	Ledger(ctx context.Context, accountID, before string, limit int) ([]ledger.Entry, error)
	Usage(ctx context.Context, accountID string, env domain.Environment, since time.Time) ([]domain.UsageDay, error)
	WriteLedger(ctx context.Context, fn func(tx ledger.Tx) error) error
}

// UsageDays is how far back the usage chart looks.
const UsageDays = 30

// BalanceView is an account's balance, a page of its ledger (newest first)
// and its usage per channel per day.
type BalanceView struct {
	Account domain.Account
	Ledger  []ledger.Entry
	// NextBefore is the cursor of the next (older) ledger page ("" on the last).
	NextBefore string
	Usage      []domain.UsageDay
	// Since is the first day of the usage.
	Since time.Time
}

// Balance shows an account's money: its balance, the ledger page before
// the cursor (a ledger line id, "" for the newest) and the usage of one
// environment over the last UsageDays days.
func (s *Service) Balance(ctx context.Context, a Actor, accountID, before string, env domain.Environment) (BalanceView, error) {
	acct, _, err := s.reach(ctx, a, accountID, user.Viewer)
	if err != nil {
		return BalanceView{}, err
	}
	const page = 25
	lines, err := s.st.Ledger(ctx, acct.ID, before, page+1)
	if err != nil {
		return BalanceView{}, err
	}
	out := BalanceView{Account: acct, Ledger: lines}
	if len(lines) > page {
		out.Ledger, out.NextBefore = lines[:page], lines[page-1].ID
	}
	out.Since = s.now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -(UsageDays - 1))
	if out.Usage, err = s.st.Usage(ctx, acct.ID, env, out.Since); err != nil {
		return BalanceView{}, err
	}
	return out, nil
}

// Account reads the account an actor works on (the panel's header shows
// its name and balance).
func (s *Service) Account(ctx context.Context, a Actor, accountID string) (domain.Account, error) {
	return s.account(ctx, a, accountID, user.Viewer)
}

// TopUp adds credits to an account (or, negative, corrects its balance);
// the ledger line names the operator and their note. It returns the new
// balance.
func (s *Service) TopUp(ctx context.Context, a Actor, accountID string, credits float64, note string) (int64, error) {
	if err := operator(a); err != nil {
		return 0, err
	}
	acct, err := s.account(ctx, a, accountID, user.Operator)
	if err != nil {
		return 0, err
	}
	var p problems
	amount, err := ledger.FromCredits(credits)
	if err != nil || amount == 0 {
		p.add("amount", "must be a non-zero number of credits with at most 6 decimals")
	}
	note = strings.TrimSpace(note)
	if msg := labelProblem(note, 200); msg != "" {
		p.add("note", msg)
	}
	if err := p.err("The top-up is not valid."); err != nil {
		return 0, err
	}
	kind := ledger.TopUp
	if amount < 0 {
		kind = ledger.Adjust
	}
	line := "by operator " + a.Email
	if note != "" {
		line += ": " + note
	}
	var balance int64
	err = s.st.WriteLedger(ctx, func(tx ledger.Tx) error {
		var err error
		balance, err = ledger.Credit(ctx, tx, acct.ID, amount, kind, line, s.now().UTC())
		return err
	})
	if errors.Is(err, ledger.ErrInsufficientCredits) {
		return 0, invalid("amount", "would take the balance below zero")
	}
	return balance, err
}
