package manage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/user"
)

// ErrSuspended: the actor's own account (or one above it) is suspended;
// its users are refused everything until it is resumed.
var ErrSuspended = domain.ErrSuspended

// SuspensionStore suspends and resumes an account with its subtree, in
// one transaction each (store.SuspendSubtree, ResumeSubtree). It is not
// part of Store: a Service over a store without it refuses both actions.
type SuspensionStore interface {
	SuspendSubtree(ctx context.Context, accountID string, at time.Time) error
	ResumeSubtree(ctx context.Context, accountID string) error
}

// errNoSuspensions: the Service was given a store that cannot suspend.
var errNoSuspensions = errors.New("manage: the store cannot suspend accounts")

// SuspendAccount suspends an account and every account below it: their
// keys, credentials, SMPP users and panel users are refused, their open
// binds closed, their queued and scheduled messages held. Its parent's
// owner or admin, or an operator, may; for anybody else the account is
// not found (a sibling, another tree, the account itself, a child
// reaching up). Suspending it again changes nothing.
func (s *Service) SuspendAccount(ctx context.Context, a Actor, accountID string) (domain.Account, error) {
	return s.suspension(ctx, a, accountID, func(st SuspensionStore) error {
		return st.SuspendSubtree(ctx, accountID, s.now().UTC())
	})
}

// ResumeAccount lifts the suspension SuspendAccount made of the account:
// its subtree goes back to what it was before, so an account below it
// that was suspended itself stays suspended, and the whole subtree stays
// suspended while an account above it is. Held messages go out (those
// whose validity ended while held were expired and refunded).
func (s *Service) ResumeAccount(ctx context.Context, a Actor, accountID string) (domain.Account, error) {
	return s.suspension(ctx, a, accountID, func(st SuspensionStore) error {
		return st.ResumeSubtree(ctx, accountID)
	})
}

func (s *Service) suspension(ctx context.Context, a Actor, accountID string, op func(SuspensionStore) error) (domain.Account, error) {
	if err := s.mayManageChild(ctx, a, accountID); err != nil {
		return domain.Account{}, err
	}
	st, ok := s.st.(SuspensionStore)
	if !ok {
		return domain.Account{}, errNoSuspensions
	}
	if err := op(st); err != nil {
		return domain.Account{}, fmt.Errorf("account %s: %w", accountID, err)
	}
	acct, err := s.st.Account(ctx, accountID)
	if err != nil {
		return acct, fmt.Errorf("account %s: %w", accountID, err)
	}
	return acct, nil
}

// mayManageChild checks that the actor may act on accountID as its
// parent: an operator, or an owner or admin of the account's parent whose
// own account is not suspended. Any other account is not found, so that
// nobody learns which ids exist outside their own children.
func (s *Service) mayManageChild(ctx context.Context, a Actor, accountID string) error {
	if a.Operator() {
		if _, err := s.st.Account(ctx, accountID); err != nil {
			return fmt.Errorf("account %s: %w", accountID, err)
		}
		return nil
	}
	if _, err := s.account(ctx, a, "", user.Admin); err != nil {
		return err
	}
	child, err := s.st.Account(ctx, accountID)
	if errors.Is(err, domain.ErrNotFound) || err == nil && (child.ParentID == "" || child.ParentID != a.AccountID) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("account %s: %w", accountID, err)
	}
	return nil
}
