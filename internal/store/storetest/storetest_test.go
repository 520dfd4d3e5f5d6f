package storetest

import (
	"context"
	"testing"

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
