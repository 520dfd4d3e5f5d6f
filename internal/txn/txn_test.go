package txn

import (
	"context"
	"errors"
	"testing"
)

type fakeTx struct{ writes []string }

func (f *fakeTx) Put(s string) { f.writes = append(f.writes, s) }

type fakeStore struct {
	tx        *fakeTx
	committed bool
}

func (s *fakeStore) Write(ctx context.Context, fn func(tx *fakeTx) error) error {
	s.tx = &fakeTx{}
	if err := fn(s.tx); err != nil {
		return err
	}
	s.committed = true
	return nil
}

type putter interface{ Put(string) }

func TestAsHandsTheViewAndItsError(t *testing.T) {
	st := &fakeStore{}
	w := As(st, func(tx *fakeTx) putter { return tx })
	if err := w.Write(context.Background(), func(tx putter) error { tx.Put("a"); return nil }); err != nil {
		t.Fatal(err)
	}
	if !st.committed || len(st.tx.writes) != 1 || st.tx.writes[0] != "a" {
		t.Fatalf("the write did not reach the store's transaction: %+v", st)
	}
	boom := errors.New("boom")
	st.committed = false
	if err := w.Write(context.Background(), func(putter) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the function's error", err)
	}
	if st.committed {
		t.Fatal("a failed function committed")
	}
}
