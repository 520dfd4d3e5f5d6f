package webhook

import (
	"context"
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
)

// lineStore logs, in order, the outcomes recorded and the events
// released.
type lineStore struct {
	secretStore
	mu  sync.Mutex
	log []string
}

func (s *lineStore) ClaimEvents(context.Context, string, time.Time, time.Duration, int) ([]domain.Event, error) {
	return nil, nil
}

func (s *lineStore) RecordAttempts(_ context.Context, _ string, outs []domain.AttemptOutcome) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range outs {
		s.log = append(s.log, "recorded "+o.Attempt.EventID+" "+o.State)
	}
	return nil
}

func (s *lineStore) ReleaseEvents(_ context.Context, _ string, ids []string, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		s.log = append(s.log, "released "+id)
	}
	return nil
}

func (s *lineStore) StopEventsForURL(context.Context, string, string) (int64, error) { return 0, nil }

func (s *lineStore) HurryEvents(context.Context, string, string, time.Time) (int64, error) {
	return 0, nil
}

func (s *lineStore) entries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// Events handed over behind another of their message (domain.Event.Then)
// are posted after it, one at a time, each once the one before it was
// answered 2xx. One not delivered ends the line: the events behind it are
// never posted here, and go back to the table only after its outcome was
// recorded.
func TestWorkerPostsALineInOrder(t *testing.T) {
	var mu sync.Mutex
	var posts []string // "start id" and "end id", as the receiver saw them
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("webhook-id")
		mu.Lock()
		posts = append(posts, "start "+id)
		mu.Unlock()
		// A slow first answer: an event posted before it came would
		// start before it ends.
		if id == "evt_a1" {
			time.Sleep(20 * time.Millisecond)
		}
		mu.Lock()
		posts = append(posts, "end "+id)
		mu.Unlock()
		if id == "evt_b1" {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	// Closed after the worker stops (cleanups run last first): a post
	// still under way must not meet a receiver that went away.
	t.Cleanup(rcv.Close)
	st := &lineStore{}
	w := NewWorker(WorkerConfig{Store: st, Sender: NewSender(SenderOptions{ClientOptions: ClientOptions{AllowPrivate: true}}),
		Schedule: Schedule{time.Hour}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	leasetest.Run(t, w.Run)
	ev := func(id, msg string, then ...domain.Event) domain.Event {
		return domain.Event{ID: id, AccountID: "acc_1", MessageID: msg, Event: "delivery_status", URL: rcv.URL, Body: "{}", Then: then}
	}
	w.Queue().Hand(context.Background(), []domain.Event{
		ev("evt_a1", "msg_a", ev("evt_a2", "msg_a"), ev("evt_a3", "msg_a")),
		ev("evt_b1", "msg_b", ev("evt_b2", "msg_b"), ev("evt_b3", "msg_b")),
	})
	waitFor(t, "every outcome and release", func() bool { return len(st.entries()) == 6 })

	mu.Lock()
	got := slices.Clone(posts)
	mu.Unlock()
	var a []string
	for _, p := range got {
		if slices.Contains([]string{"evt_a1", "evt_a2", "evt_a3"}, p[len(p)-6:]) {
			a = append(a, p)
		}
	}
	if want := []string{"start evt_a1", "end evt_a1", "start evt_a2", "end evt_a2", "start evt_a3", "end evt_a3"}; !slices.Equal(a, want) {
		t.Fatalf("msg_a's posts: %q, want %q", a, want)
	}
	for _, p := range got {
		if p == "start evt_b2" || p == "start evt_b3" {
			t.Fatalf("posted %s behind an event that was not delivered: %q", p, got)
		}
	}
	log := st.entries()
	at := func(s string) int {
		i := slices.Index(log, s)
		if i < 0 {
			t.Fatalf("%q missing from %q", s, log)
		}
		return i
	}
	for _, id := range []string{"evt_a1", "evt_a2", "evt_a3"} {
		at("recorded " + id + " delivered")
	}
	if failed := at("recorded evt_b1 pending"); at("released evt_b2") < failed || at("released evt_b3") < failed {
		t.Fatalf("events behind the failed one released before its outcome was recorded: %q", log)
	}
}

// An item handed over with events behind it, still waiting in memory when
// the worker stops, goes back to the table with them.
func TestWorkerReleasesALineAtStop(t *testing.T) {
	st := &lineStore{}
	w := NewWorker(WorkerConfig{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	// Handed over before the worker runs, and the worker stopped at once:
	// the run releases what it never started.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w.Queue().Hand(context.Background(), []domain.Event{{ID: "evt_1", MessageID: "msg_1", URL: "https://hooks.example.com/",
		Then: []domain.Event{{ID: "evt_2", MessageID: "msg_1", URL: "https://hooks.example.com/"}}}})
	w.Run(ctx)
	if got := st.entries(); !slices.Equal(got, []string{"released evt_1", "released evt_2"}) {
		t.Fatalf("at stop: %q, want both events released", got)
	}
}
