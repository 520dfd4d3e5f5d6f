package tracking

import (
	"context"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
)

// UsageTx adds to the usage counts in the transaction that charges,
// refunds or re-prices the messages they count (intake declares it).
type UsageTx = intake.UsageTx

// AlertTx is what posting an account's alert needs (intake declares it:
// a debit decides most alerts).
type AlertTx = intake.AlertTx

// InsertCounted writes new messages and counts them in usage, as a send
// does (an opt-out's confirmation is one).
func InsertCounted(ctx context.Context, tx interface {
	InsertMessages(ctx context.Context, msgs []domain.Message) error
	UsageTx
}, msgs []domain.Message) error {
	return intake.InsertCounted(ctx, tx, msgs)
}

// AnnounceLowBalances posts balance.low for accounts found below their
// threshold with no mark, each in a transaction of its own that marks it
// first, so a debit deciding the same crossing on another node at the
// same moment posts it once between them. It reports how many it posted.
func (t *Tracker) AnnounceLowBalances(ctx context.Context, accts []domain.Account) (int, error) {
	now := t.now()
	posted := 0
	for _, a := range accts {
		if a.Alerts.LowBalance == nil {
			continue
		}
		var evs []domain.Event
		err := t.w.Write(ctx, func(w Work) error {
			var err error
			evs, err = intake.LowBalanceAlert(ctx, w, a, now)
			return err
		})
		if err != nil {
			return posted, err
		}
		posted += len(evs)
	}
	return posted, nil
}
