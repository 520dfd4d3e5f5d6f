package webhook

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/lease/leasetest"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// tableStore has one event due in the table, which a claim returns once,
// and remembers the events whose attempts were recorded, in order, and
// how many were recorded at each claim.
type tableStore struct {
	secretStore
	mu       sync.Mutex
	due      []domain.Event
	recorded map[string]bool
	order    []string
	claims   []int
}

func (s *tableStore) ClaimEvents(context.Context, string, time.Time, time.Duration, int) ([]domain.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claims = append(s.claims, len(s.order))
	out := s.due
	s.due = nil
	return out, nil
}

func (s *tableStore) RecordAttempts(_ context.Context, _ string, outs []domain.AttemptOutcome) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range outs {
		s.recorded[o.Attempt.EventID] = true
		s.order = append(s.order, o.Attempt.EventID)
	}
	return nil
}

// state is the claims made, as the number of outcomes recorded before
// each, and the outcomes recorded, in order.
func (s *tableStore) state() (claims []int, order []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.claims), slices.Clone(s.order)
}

func (s *tableStore) ReleaseEvents(context.Context, string, []string, time.Time) error { return nil }

func (s *tableStore) StopEventsForURL(context.Context, string, string) (int64, error) { return 0, nil }

func (s *tableStore) HurryEvents(context.Context, string, string, time.Time) (int64, error) {
	return 0, nil
}

func (s *tableStore) done(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recorded[id]
}

// TestWorkerPollsTableWhileBusy: events arriving in memory without a pause
// must not keep the worker from the table, where retries and a dead node's
// lapsed leases wait.
func TestWorkerPollsTableWhileBusy(t *testing.T) {
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	// Closed after the worker stops (cleanups run last first): a post
	// still under way must not meet a receiver that went away.
	t.Cleanup(rcv.Close)
	st := &tableStore{recorded: map[string]bool{}}
	w := NewWorker(WorkerConfig{Store: st, Sender: NewSender(SenderOptions{ClientOptions: ClientOptions{AllowPrivate: true}}), Poll: 50 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	leasetest.Run(t, w.Run)
	leasetest.Stream(t, w.Queue(), func(i int) domain.Event {
		return domain.Event{ID: fmt.Sprintf("evt_stream_%d", i), AccountID: "acc_1", Event: "delivery_status", URL: rcv.URL, Body: "{}"}
	})
	waitFor(t, "the stream to flow", func() bool { return st.done("evt_stream_5") })
	st.mu.Lock()
	st.due = []domain.Event{{ID: "evt_table", AccountID: "acc_1", Event: "delivery_status", URL: rcv.URL, Body: "{}"}}
	st.mu.Unlock()
	waitFor(t, "the event due in the table to be delivered", func() bool { return st.done("evt_table") })
}

var waitFor = polltest.Until
