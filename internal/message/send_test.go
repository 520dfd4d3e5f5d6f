package message

import (
	"context"
	"time"

	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/intake/intaketest"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
)

// These tests send in the REST front's terms (intaketest reads a Draft
// into the core's request).
type (
	Draft           = intaketest.Draft
	FallbackRequest = intaketest.FallbackRequest
	SendOptions     = intake.SendOptions
)

// sendConfig is what these tests build their send and read services from:
// intake's sends, and the changes this package's reads are told of.
type sendConfig struct {
	intaketest.Config
	Changes Changes
}

// services are intake's send and this package's reads over one store.
type services struct {
	sends intaketest.Sends
	*Service
}

func newServices(c sendConfig) services {
	sends := intaketest.New(c.Config)
	return services{sends: sends, Service: NewService(Config{Store: c.Store, Now: c.Now, Changes: c.Changes})}
}

// Send sends d as the caller.
func (s services) Send(ctx context.Context, c Caller, d Draft, opt SendOptions) (intake.Outcome, error) {
	return s.sends.Send(ctx, c, d, opt)
}

// Close stops the sends.
func (s services) Close() { s.sends.Close() }

func creditAccount(ctx context.Context, st *store.Store, accountID string, amount int64, kind ledger.Kind, note string) (int64, error) {
	return bootstrap.AddCredits(ctx, st, accountID, amount, kind, note, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}
