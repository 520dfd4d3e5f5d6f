package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/store"
)

func TestIdempotencyRecords(t *testing.T) {
	eachStore(t, func(t *testing.T, ctx context.Context, st *store.Store) {
		saves := []domain.Idempotency{
			{KeyID: "key_a", Key: "k", RequestHash: "first", StatusCode: 200, Response: []byte(`{"n":1}`), CreatedAt: at(0)},
			{KeyID: "key_a", Key: "k", RequestHash: "second", StatusCode: 201, Response: []byte(`{"n":2}`), CreatedAt: at(time.Minute)},
			{KeyID: "key_b", Key: "k", RequestHash: "other key", StatusCode: 200, Response: []byte(`{}`), CreatedAt: at(2 * time.Hour)},
			{KeyID: "key_a", Key: "old", RequestHash: "h", StatusCode: 200, Response: []byte(`[]`), CreatedAt: at(-time.Hour)},
		}
		for _, s := range saves {
			if err := st.SaveIdempotency(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		reads := []struct {
			name, keyID, key string
			want             domain.Idempotency
			wantErr          error
		}{
			{"first writer wins", "key_a", "k", saves[0], nil},
			{"keys are per API key", "key_b", "k", saves[2], nil},
			{"unknown", "key_a", "nope", domain.Idempotency{}, domain.ErrNotFound},
		}
		for _, tc := range reads {
			got, err := st.Idempotency(ctx, tc.keyID, tc.key)
			wantErr(t, tc.name, err, tc.wantErr)
			if err == nil && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
			}
		}

		deletes := []struct {
			before time.Time
			want   int64
			left   []string // keys of key_a still readable
		}{
			{at(-2 * time.Hour), 0, []string{"k", "old"}},
			{at(0), 1, []string{"k"}},
			{at(time.Hour), 1, nil},
			{at(time.Hour), 0, nil},
		}
		for _, tc := range deletes {
			n, err := st.DeleteIdempotencyBefore(ctx, tc.before)
			if err != nil || n != tc.want {
				t.Errorf("delete before %v: %d (%v), want %d", tc.before, n, err, tc.want)
			}
			for _, k := range []string{"k", "old"} {
				_, err := st.Idempotency(ctx, "key_a", k)
				found := err == nil
				want := false
				for _, l := range tc.left {
					want = want || l == k
				}
				if found != want {
					t.Errorf("after delete before %v: key %q found=%v, want %v", tc.before, k, found, want)
				}
			}
		}
		if _, err := st.Idempotency(ctx, "key_b", "k"); err != nil {
			t.Errorf("newer record deleted: %v", err)
		}
	})
}
