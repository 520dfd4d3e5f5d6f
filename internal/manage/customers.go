package manage

import (
	"context"
	"fmt"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/user"
)

// The panel's Customers pages read a reseller's children through these,
// with the same checks as the tree's actions: an owner or admin of the
// reseller (or an operator naming it), and for one customer only a child
// of that reseller. The changes go through CreateAccount, UpdateAccount,
// Transfer, SuspendAccount and ResumeAccount, which the management API
// uses too.

// CustomersView is a reseller's children with its margin on each over the
// margins report's default range (the last 30 days).
type CustomersView struct {
	Reseller domain.Account
	Children []domain.Account
	// Margins are the report's rows by child id; a child without live
	// traffic in the range has none.
	Margins  map[string]domain.MarginRow
	Currency string
}

// Customers lists the children of the actor's reseller account (an
// operator names the reseller). Roles below admin, and accounts that are
// not resellers, are refused: the page is for those who manage children.
func (s *Service) Customers(ctx context.Context, a Actor, accountID string) (CustomersView, error) {
	acct, err := s.account(ctx, a, accountID, user.Admin)
	if err != nil {
		return CustomersView{}, err
	}
	if !acct.Reseller {
		return CustomersView{}, ErrForbidden
	}
	children, err := s.st.Children(ctx, acct.ID)
	if err != nil {
		return CustomersView{}, err
	}
	report, err := s.Margins(ctx, a, MarginQuery{GroupBy: "account", Account: marginAccount(a, acct.ID)})
	if err != nil {
		return CustomersView{}, err
	}
	out := CustomersView{Reseller: acct, Children: nonNil(children), Margins: map[string]domain.MarginRow{}, Currency: report.Currency}
	for _, r := range report.Rows {
		out.Margins[r.Key] = r
	}
	return out, nil
}

// marginAccount names the reseller to the margins report: a reseller's
// users get their own without naming it, operators must name it.
func marginAccount(a Actor, resellerID string) string {
	if a.Operator() {
		return resellerID
	}
	return ""
}

// CustomerView is one child as its parent manages it: the account, its
// own children (read only: a grandparent goes through the child), its
// balance, ledger and usage, its parent's own prices for the margin
// guard, and the parent's margin on it.
type CustomerView struct {
	Parent   domain.Account
	Account  domain.Account
	Children []domain.Account
	Balance  BalanceView
	Margin   domain.MarginRow
	Currency string
}

// Customer reads one child of parentID for the actor managing it. A
// reseller's users pass "" (their own account) or their own id; operators
// name the parent, and a child of any other account is not found, as for
// everyone else: a sibling, a grandchild, the parent itself, another tree.
func (s *Service) Customer(ctx context.Context, a Actor, parentID, childID string) (CustomerView, error) {
	if err := s.mayManageChild(ctx, a, childID); err != nil {
		return CustomerView{}, err
	}
	if !a.Operator() && parentID == "" {
		parentID = a.AccountID
	}
	c, err := s.st.Account(ctx, childID)
	if err != nil {
		return CustomerView{}, fmt.Errorf("account %s: %w", childID, err)
	}
	if c.ParentID == "" || c.ParentID != parentID {
		return CustomerView{}, ErrNotFound
	}
	parent, err := s.st.Account(ctx, c.ParentID)
	if err != nil {
		return CustomerView{}, fmt.Errorf("parent %s: %w", c.ParentID, err)
	}
	kids, err := s.st.Children(ctx, c.ID)
	if err != nil {
		return CustomerView{}, err
	}
	bal, err := s.Balance(ctx, a, c.ID, "", domain.Live)
	if err != nil {
		return CustomerView{}, err
	}
	out := CustomerView{Parent: parent, Account: c, Children: nonNil(kids), Balance: bal, Currency: parent.Currency}
	if parent.Reseller {
		report, err := s.Margins(ctx, a, MarginQuery{GroupBy: "account", Account: marginAccount(a, parent.ID)})
		if err != nil {
			return CustomerView{}, err
		}
		for _, r := range report.Rows {
			if r.Key == c.ID {
				out.Margin = r
			}
		}
	}
	return out, nil
}
