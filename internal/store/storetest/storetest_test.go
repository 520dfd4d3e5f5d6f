package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/store"
)

func TestEachMigratesAndPings(t *testing.T) {
	Each(t, func(t *testing.T, st *store.Store, dsn string) {
		if err := st.Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Migrating twice is a no-op.
		if err := st.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// Copies of the migrated template are databases of their own: what one
// test writes, another never sees.
func TestMigratedCopiesAreApart(t *testing.T) {
	ctx := context.Background()
	a := Open(t, Migrated(t, "sqlite"))
	b := Open(t, Migrated(t, "sqlite"))
	id := NewAccount(t, a, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	if _, err := a.Account(ctx, id); err != nil {
		t.Fatalf("the account is not in the copy it was written to: %v", err)
	}
	if _, err := b.Account(ctx, id); err == nil {
		t.Fatal("an account written to one copy is in another")
	}
}
