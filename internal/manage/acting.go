package manage

import (
	"context"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// Acting resolves the account an action of another package works on and
// checks the actor's role against need, as this package's own actions do:
// users act on their own account (naming another is ErrForbidden),
// operators name it; a suspended account's users may do nothing.
func (s *Service) Acting(ctx context.Context, a Actor, accountID, need string) (domain.Account, error) {
	return s.account(ctx, a, accountID, need)
}
