package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/store"
)

// A platform's id for a file is found in its own scope only, until it is
// too old, and a new upload replaces it.
func TestPlatformMedia(t *testing.T) {
	eachStore(t, func(t *testing.T, ctx context.Context, st *store.Store) {
		const scope, sum = "whatsapp/106540352242922", "3fd6e6be"
		if _, found, err := st.PlatformMedia(ctx, scope, sum, t0.Add(-time.Hour)); err != nil || found {
			t.Fatalf("empty table: found %v, err %v", found, err)
		}
		if err := st.SavePlatformMedia(ctx, scope, sum, "111", t0); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			scope string
			since time.Time
			want  string
		}{
			{scope, t0.Add(-time.Hour), "111"},
			{scope, t0, ""}, // uploaded too long ago
			{"whatsapp/other", t0.Add(-time.Hour), ""},
		} {
			id, found, err := st.PlatformMedia(ctx, c.scope, sum, c.since)
			if err != nil || id != c.want || found != (c.want != "") {
				t.Errorf("%s since %v: %q %v %v, want %q", c.scope, c.since, id, found, err, c.want)
			}
		}
		if err := st.SavePlatformMedia(ctx, scope, sum, "222", t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if id, _, err := st.PlatformMedia(ctx, scope, sum, t0); err != nil || id != "222" {
			t.Fatalf("after a new upload: %q %v, want 222", id, err)
		}
	})
}

// A provider's id of an inbound message is recorded once: the copy is
// ErrConflict and writes nothing, also inside a transaction that goes on
// (PostgreSQL aborts a transaction on a failed statement, so the copy
// must not be one). Replies without an id never collide.
func TestInboundProviderRefOnce(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		in := func(n int, provider, ref string) domain.Inbound {
			return domain.Inbound{ID: id.New(id.Inbound, at(time.Duration(n)*time.Second)), AccountID: acc.ID, Env: "live",
				Phone: "34600000001", Channel: "WHATSAPP", Body: "hi", Provider: provider, ProviderRef: ref, ReceivedAt: at(time.Duration(n) * time.Second)}
		}
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			for i, c := range []struct {
				provider, ref string
				want          error
			}{
				{"whatsapp", "wamid.A", nil}, {"whatsapp", "wamid.A", domain.ErrConflict}, {"other", "wamid.A", nil},
				{"whatsapp", "", nil}, {"whatsapp", "", nil}, {"whatsapp", "wamid.B", nil},
			} {
				if err := tx.InsertInbound(ctx, in(i, c.provider, c.ref)); !errors.Is(err, c.want) {
					t.Errorf("%d %s %q: %v, want %v", i, c.provider, c.ref, err, c.want)
				}
			}
			return nil
		})
		last, err := st.LastInbound(ctx, acc.ID, "live", "34600000001", "WHATSAPP")
		if err != nil || !last.Equal(at(5*time.Second)) {
			t.Fatalf("the writes after the copy are lost: last %v %v", last, err)
		}
	})
}
