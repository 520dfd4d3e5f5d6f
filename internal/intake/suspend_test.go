package intake

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// TestSendRefusesSuspended: a suspended account's send (dry runs too) is
// refused before anything is validated, priced or written.
func TestSendRefusesSuspended(t *testing.T) {
	svc, w, acc := memoryService(10 * credit)
	acc.SuspendedAt, acc.SuspendedBy = at(time.Second), "acc_parent"
	who := domain.Principal{Account: acc, Kind: domain.CredentialAPIKey, CredentialID: "key_test", Env: domain.Live}
	for _, dry := range []bool{false, true} {
		_, err := svc.Send(context.Background(), who, domain.SendRequest{}, SendOptions{DryRun: dry})
		if !errors.Is(err, ErrSuspended) || !errors.Is(err, domain.ErrSuspended) {
			t.Fatalf("dry run %v: %v, want ErrSuspended", dry, err)
		}
	}
	if len(w.tx.messages) != 0 || len(w.tx.ledger) != 0 || w.tx.balances[acc.ID] != 10*credit {
		t.Fatalf("%d messages, %d ledger lines, balance %d", len(w.tx.messages), len(w.tx.ledger), w.tx.balances[acc.ID])
	}
}
