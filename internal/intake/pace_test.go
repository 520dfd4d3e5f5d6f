package intake

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// fakeBacklog is a dispatcher queue whose backlog the test sets; reads
// counts the sends' looks at it.
type fakeBacklog struct {
	mu     sync.Mutex
	n      int
	oldest time.Duration
	moved  chan struct{}
	reads  int
	read   chan struct{} // a send looked
}

func newFakeBacklog(n int, oldest time.Duration) *fakeBacklog {
	return &fakeBacklog{n: n, oldest: oldest, moved: make(chan struct{}), read: make(chan struct{}, 16)}
}

func (b *fakeBacklog) Backlog() (int, time.Duration, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reads++
	select {
	case b.read <- struct{}{}:
	default:
	}
	return b.n, b.oldest, b.moved
}

// set changes the backlog as a worker's take would, waking the waiters.
func (b *fakeBacklog) set(n int, oldest time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n, b.oldest = n, oldest
	close(b.moved)
	b.moved = make(chan struct{})
}

// handoff is the dispatcher's queue as intake hands to it: it counts
// what it was given.
type handoff struct {
	mu     sync.Mutex
	handed []domain.Message
}

func (h *handoff) Owner() string        { return "node-1" }
func (h *handoff) Lease() time.Duration { return 30 * time.Second }
func (h *handoff) Hand(_ context.Context, ms []domain.Message) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.handed = append(h.handed, ms...)
	return len(ms)
}

func (h *handoff) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.handed)
}

// A send due now waits while the dispatcher is behind (at least a chunk
// waiting, the oldest for longer than Behind), wakes when messages leave
// the queue, and goes once the oldest is recent enough; it is written
// only then. Scheduled sends and a backlog under the floor never wait,
// Max bounds the wait of a dispatcher that does not move, and a Behind
// of 0 turns the pacing off.
func TestPaceHoldsSendsWhileTheDispatcherIsBehind(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	acc := memoryAccount(100 * credit)
	who := domain.Principal{Account: acc, Kind: domain.CredentialAPIKey, CredentialID: "key_1", Env: domain.Live}
	type waited struct {
		mu sync.Mutex
		n  int
	}
	start := func(t *testing.T, b *fakeBacklog, max time.Duration, behind ...time.Duration) (*Service, *handoff, *waited) {
		bound := 100 * time.Millisecond
		if len(behind) > 0 {
			bound = behind[0]
		}
		tx := newFakeTx()
		tx.balances[acc.ID] = acc.Balance
		h, w := &handoff{}, &waited{}
		svc := NewService(Config{Store: fakeStore{acc}, Writer: &fakeWriter{tx: tx}, Now: func() time.Time { return now },
			Dispatch: h, Pace: &Pace{Backlog: b, Behind: bound, Floor: 256, Max: max,
				Now: func() time.Time { return now }, Waited: func(time.Duration) { w.mu.Lock(); w.n++; w.mu.Unlock() }}})
		t.Cleanup(svc.Close)
		return svc, h, w
	}
	send := func(svc *Service, r domain.SendRequest) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := svc.Send(ctx, who, r, SendOptions{})
			done <- err
		}()
		return done
	}
	sms := domain.SendRequest{Channel: domain.SMS, Recipients: []string{"5511999990010"}, Text: "hi"}
	finished := func(t *testing.T, done <-chan error) {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the send did not finish")
		}
	}
	looked := func(t *testing.T, b *fakeBacklog) {
		t.Helper()
		select {
		case <-b.read:
		case <-time.After(10 * time.Second):
			t.Fatal("the send never looked at the backlog")
		}
	}

	t.Run("behind", func(t *testing.T) {
		b := newFakeBacklog(300, time.Second)
		svc, h, w := start(t, b, time.Hour)
		done := send(svc, sms)
		looked(t, b)
		b.set(400, 2*time.Second) // messages moved, but the queue is still behind
		looked(t, b)
		if h.count() != 0 {
			t.Fatal("a send was written while the dispatcher was behind")
		}
		b.set(300, 50*time.Millisecond) // caught up: the oldest waited less than Behind
		finished(t, done)
		if h.count() != 1 || w.n != 1 {
			t.Fatalf("handed over %d, waits told %d; want 1 and 1", h.count(), w.n)
		}
	})
	t.Run("under the floor", func(t *testing.T) {
		b := newFakeBacklog(255, time.Minute)
		svc, h, w := start(t, b, time.Hour)
		finished(t, send(svc, sms))
		if h.count() != 1 || w.n != 0 {
			t.Fatalf("handed over %d, waits told %d; want 1 and 0", h.count(), w.n)
		}
	})
	t.Run("scheduled", func(t *testing.T) {
		b := newFakeBacklog(1000, time.Minute)
		svc, h, w := start(t, b, time.Hour)
		later := sms
		later.Schedule = now.Add(time.Hour)
		finished(t, send(svc, later))
		if h.count() != 0 || w.n != 0 || b.reads != 0 {
			t.Fatalf("a scheduled send: handed over %d, waits told %d, looks %d; want none", h.count(), w.n, b.reads)
		}
	})
	t.Run("off", func(t *testing.T) {
		b := newFakeBacklog(1000, time.Minute)
		svc, h, w := start(t, b, time.Hour, 0)
		finished(t, send(svc, sms))
		if h.count() != 1 || w.n != 0 || b.reads != 0 {
			t.Fatalf("pacing off: handed over %d, waits told %d, looks %d; want 1, 0, 0", h.count(), w.n, b.reads)
		}
	})
	t.Run("a dispatcher that does not move", func(t *testing.T) {
		b := newFakeBacklog(1000, time.Minute)
		svc, h, w := start(t, b, 10*time.Millisecond)
		finished(t, send(svc, sms))
		if h.count() != 1 || w.n != 1 {
			t.Fatalf("handed over %d, waits told %d; want 1 and 1", h.count(), w.n)
		}
	})
}
