package dispatch

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/tracking"
)

// gatedRecorder records nothing until the test lets it: each Apply with
// reports tells started which messages it holds, and waits until the
// test closes the gate it sent along.
type gatedRecorder struct {
	started chan gatedApply
	mu      sync.Mutex
	done    []string
}

type gatedApply struct {
	ids  []string
	gate chan struct{}
}

func (r *gatedRecorder) Apply(_ context.Context, rs []tracking.Report) error {
	if len(rs) == 0 {
		return nil
	}
	a := gatedApply{gate: make(chan struct{})}
	for _, rep := range rs {
		a.ids = append(a.ids, rep.MessageID)
	}
	r.started <- a
	<-a.gate
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = append(r.done, a.ids...)
	return nil
}

func (r *gatedRecorder) recorded() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.done...)
}

// tellingProvider takes every message and tells submitted which.
type tellingProvider struct{ submitted chan string }

func (p *tellingProvider) Name() string { return "smsc" }

func (p *tellingProvider) Submit(_ context.Context, msgs []provider.Outbound) []provider.Result {
	out := make([]provider.Result, len(msgs))
	for i, m := range msgs {
		p.submitted <- m.ID
		out[i].Ref = "ref-" + m.ID
	}
	return out
}

// A worker hands its next batch to the provider while the outcome of its
// last one is still being written, but never has two batches' outcomes
// unwritten behind it; and Run returns only when every outcome handed
// over is written.
func TestWorkerHandsOverWhileItsLastOutcomeIsWritten(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	const lease = 30 * time.Second
	rec := &gatedRecorder{started: make(chan gatedApply, 8)}
	smsc := &tellingProvider{submitted: make(chan string, 8)}
	d := NewDispatcher(DispatcherConfig{Store: &memClaimer{}, Routes: fakeRoutes{domain.SMS: smsc}, Tracker: rec, Owner: "node-1",
		Lease: lease, Workers: 1, Now: func() time.Time { return now }, Log: quietLog()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		d.Run(ctx)
	}()
	hand := func(id string) {
		t.Helper()
		m := domain.Message{ID: id, AccountID: "acc_1", Env: domain.Live, To: "5511999990001", Type: domain.SMS, Channel: domain.SMS,
			Status: domain.Sending, Body: "hi", Attempts: 1, ExpiresAt: now.Add(time.Hour), NextAttemptAt: now.Add(lease),
			LeaseOwner: "node-1"}
		if n := d.Queue().Hand(ctx, []domain.Message{m}); n != 1 {
			t.Fatalf("queue took %d of message %s", n, id)
		}
	}
	deadline := time.After(10 * time.Second)
	expect := func(what string, c <-chan string, want string) {
		t.Helper()
		select {
		case got := <-c:
			if got != want {
				t.Fatalf("%s: got %s, want %s", what, got, want)
			}
		case <-deadline:
			t.Fatalf("%s: %s never came", what, want)
		}
	}
	// recording waits for the outcome of want to be under way and
	// returns what lets it finish.
	recording := func(want string) (finish func()) {
		t.Helper()
		select {
		case a := <-rec.started:
			if len(a.ids) != 1 || a.ids[0] != want {
				t.Fatalf("recording %v, want %s", a.ids, want)
			}
			return func() { close(a.gate) }
		case <-deadline:
			t.Fatalf("the outcome of %s was never recorded", want)
		}
		return nil
	}

	hand("m1")
	expect("first batch", smsc.submitted, "m1")
	finish1 := recording("m1") // and held there
	hand("m2")
	expect("the next batch while the first one's outcome is written", smsc.submitted, "m2")
	finish2 := recording("m2")
	hand("m3")
	// m1's and m2's outcomes are both unwritten: m3 waits for one of them.
	select {
	case id := <-smsc.submitted:
		t.Fatalf("%s handed over with two batches' outcomes unwritten behind the only worker", id)
	case <-time.After(100 * time.Millisecond):
	}
	finish1()
	expect("a batch once an outcome behind the worker is written", smsc.submitted, "m3")
	finish3 := recording("m3")
	finish2()

	// Stopping waits for what is still being written.
	cancel()
	select {
	case <-stopped:
		t.Fatal("Run returned with m3's outcome unwritten")
	case <-time.After(100 * time.Millisecond):
	}
	finish3()
	select {
	case <-stopped:
	case <-deadline:
		t.Fatal("Run never returned")
	}
	if got := rec.recorded(); !slices.Equal(got, []string{"m1", "m2", "m3"}) && !slices.Equal(got, []string{"m1", "m3", "m2"}) {
		t.Errorf("outcomes written %v, want m1, m2 and m3, m1 first", got)
	}
}
