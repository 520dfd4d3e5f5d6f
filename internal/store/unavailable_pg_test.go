package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// A PostgreSQL that refuses writes (here a session that is read-only, as
// a standby's would be) fails a write as storage unavailable, and the
// store's write health says so (issue 35 item 13; SQLite's full disk is
// internal/app TestFullDiskAnswers503).
func TestPostgresWriteRefusedIsStorageUnavailable(t *testing.T) {
	dsn := storetest.DSN(t, "postgres")
	storetest.Open(t, dsn) // the schema, migrated
	ctx := context.Background()
	ro, err := store.Open(ctx, dsn+"&default_transaction_read_only=on", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	err = ro.CreateAccount(ctx, domain.Account{ID: "acc_readonly", Name: "A", Tier: "standard", Currency: "EUR", CountryCode: "ES",
		WebhookSecret: "whsec_x", CreatedAt: t0})
	if !errors.Is(err, domain.ErrStorageUnavailable) {
		t.Fatalf("a write on a read-only database: %v", err)
	}
	if ro.WriteHealth() == nil {
		t.Fatal("the write health does not tell the failed write")
	}
}
