package dispatch

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// renewOnly renews the lease of the messages it names and of no other.
type renewOnly struct {
	memClaimer
	ids map[string]bool
}

func (r *renewOnly) RenewMessages(_ context.Context, _ string, held map[string]time.Time, _ time.Time, _ time.Duration) ([]string, error) {
	var out []string
	for id := range held {
		if r.ids[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

// A chunk whose messages all stay leased goes as it is; one that loses
// some goes without them, in order, and the batch it came from is left
// as it was.
func TestReadyKeepsWhatStaysLeased(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	store := &renewOnly{ids: map[string]bool{"a": true, "c": true}}
	d := &Dispatcher{store: store, owner: "n1", lease: time.Minute, now: func() time.Time { return now },
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	batch := []domain.Message{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	h := &hold{d: d, until: map[string]time.Time{}, recording: map[string]bool{}}
	for _, m := range batch {
		h.until[m.ID] = now.Add(time.Minute)
	}

	got := h.ready(context.Background(), batch)
	if len(got) != 3 || &got[0] != &batch[0] {
		t.Fatalf("every message leased: got %d messages, a copy: %v; want the chunk itself", len(got), len(got) > 0 && &got[0] != &batch[0])
	}

	// b's lease is about to end and the renewal does not take it.
	h.until["b"] = now.Add(time.Second)
	got = h.ready(context.Background(), batch)
	if len(got) != 2 || got[0].ID != "a" || got[1].ID != "c" {
		t.Fatalf("b unleased: got %v, want a and c", ids(got))
	}
	if &got[0] == &batch[0] {
		t.Fatal("the chunk without b shares the batch's array")
	}
	if batch[0].ID != "a" || batch[1].ID != "b" || batch[2].ID != "c" {
		t.Fatalf("the batch changed: %v", ids(batch))
	}
}

func ids(ms []domain.Message) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// countRenewals counts the renewals made, and those that ended after it
// was told the heartbeat stopped; started hears of each renewal as it
// begins.
type countRenewals struct {
	memClaimer
	started chan struct{}
	mu      sync.Mutex
	n       int
	after   int
	done    bool
}

func (c *countRenewals) RenewMessages(_ context.Context, _ string, held map[string]time.Time, _ time.Time, _ time.Duration) ([]string, error) {
	select {
	case c.started <- struct{}{}:
	default:
	}
	time.Sleep(5 * time.Millisecond) // a renewal takes a while: stop must wait for it
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if c.done {
		c.after++
	}
	return slices.Collect(maps.Keys(held)), nil
}

func (c *countRenewals) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// The heartbeat renews the lease again and again while a batch is under
// way; stop waits for a renewal under way, and once it returns none
// comes.
func TestHeartbeatRenewsUntilStopped(t *testing.T) {
	for range 10 {
		store := &countRenewals{started: make(chan struct{}, 1)}
		d := &Dispatcher{store: store, owner: "n1", lease: 4 * time.Millisecond, now: time.Now,
			log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		h := &hold{d: d, until: map[string]time.Time{"a": time.Now().Add(time.Minute)}, recording: map[string]bool{}}
		stop := h.heartbeat(context.Background())
		polltest.Until(t, "two renewals", func() bool { return store.count() >= 2 })
		<-store.started // drop a start heard before
		<-store.started // one under way now
		stop()
		store.mu.Lock()
		store.done = true
		store.mu.Unlock()
		time.Sleep(10 * time.Millisecond) // ten beats' time: none may come
		store.mu.Lock()
		after := store.after
		store.mu.Unlock()
		if after != 0 {
			t.Fatalf("%d renewals ended after stop returned", after)
		}
	}
}
