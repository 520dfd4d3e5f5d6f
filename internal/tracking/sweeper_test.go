package tracking

import (
	"context"
	"testing"
	"time"
)

// sweepStore deletes old events from a pile, at most limit per call.
type sweepStore struct {
	SweepStore
	old    int
	before []time.Time
}

func (s *sweepStore) DeleteEventsBefore(ctx context.Context, t time.Time, limit int) (int, error) {
	s.before = append(s.before, t)
	n := min(limit, s.old)
	s.old -= n
	return n, nil
}

// Old events go in batches until none is left, all older than 30 days.
func TestSweeperDeletesOldEvents(t *testing.T) {
	now := time.Date(2030, 1, 31, 0, 0, 0, 0, time.UTC)
	st := &sweepStore{old: 1234}
	s := &Sweeper{Store: st, Now: func() time.Time { return now }}
	if err := s.DeleteOldEvents(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st.old != 0 || len(st.before) != 3 {
		t.Fatalf("%d events left after %d batches, want 0 after 3", st.old, len(st.before))
	}
	for _, b := range st.before {
		if !b.Equal(now.Add(-30 * 24 * time.Hour)) {
			t.Errorf("deleted events before %v, want 30 days before %v", b, now)
		}
	}
}
