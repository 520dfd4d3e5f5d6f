package dispatch

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/intake/intaketest"
	"github.com/msgsvc/msgsvc/internal/lease"
	"github.com/msgsvc/msgsvc/internal/lease/leasetest"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// handoffTo rebuilds the fixture's service with an in-memory hand-off to
// q; it returns a count of the service's own wakes. enqueue is told what q
// kept in memory.
func (f *fixture) handoffTo(t *testing.T, routes fakeRoutes, q *lease.Queue[domain.Message], enqueue func([]domain.Message)) *atomic.Int64 {
	t.Helper()
	wakes := &atomic.Int64{}
	f.svc = intaketest.New(intaketest.Config{Store: f.st, Picker: routes, Now: f.clock, AllowPrivateCallbacks: true,
		Wake: func() { wakes.Add(1) }, Dispatch: recordingHandoff{Queue: q, enqueue: enqueue}})
	t.Cleanup(f.svc.Close)
	return wakes
}

// recordingHandoff tells a test what the queue kept in memory.
type recordingHandoff struct {
	*lease.Queue[domain.Message]
	enqueue func([]domain.Message)
}

func (h recordingHandoff) Hand(ctx context.Context, msgs []domain.Message) int {
	n := h.Queue.Hand(ctx, msgs)
	h.enqueue(msgs[:n])
	return n
}

// idleQueue is a dispatch queue of node-1 that nobody runs, whose memory
// takes room messages.
func (f *fixture) idleQueue(room int) *lease.Queue[domain.Message] {
	return lease.New(lease.Config[domain.Message]{Name: "messages", Owner: "node-1", Lease: time.Minute, Claim: f.st.ClaimDue,
		Release: f.st.ReleaseMessages, ID: func(m domain.Message) string { return m.ID }, Room: room, Now: f.clock})
}

// sendTwoHandedOff sends two SMS through a service that hands what is due
// to an idle dispatch queue with room for room messages. It returns what
// the queue took, the service's own wakes and the send's outcome.
func sendTwoHandedOff(t *testing.T, room int) (*fixture, []domain.Message, *atomic.Int64, intake.Outcome) {
	t.Helper()
	routes := fakeRoutes{domain.SMS: &fakeProvider{name: "sms-co"}}
	f := newFixture(t, routes, "", false)
	var got []domain.Message
	wakes := f.handoffTo(t, routes, f.idleQueue(room), func(msgs []domain.Message) { got = append(got, msgs...) })
	out, err := f.svc.Send(context.Background(), f.caller, intaketest.Draft{Recipients: []string{"5511999990010", "5511999990011"}, Text: "hi",
		Type: "SMS"}, intake.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return f, got, wakes, out
}

// TestSendHandsOffLeased: messages due at once are written leased to the
// local dispatcher and given to it in memory; no other node can claim them
// until the lease runs out, and then any node can.
func TestSendHandsOffLeased(t *testing.T) {
	f, got, wakes, out := sendTwoHandedOff(t, 10)
	ctx := context.Background()
	lease := f.clock().Add(time.Minute)
	if len(got) != 2 {
		t.Fatalf("handed over %d messages, want 2", len(got))
	}
	for i, m := range got {
		if m.ID != out.Receipt.Messages[i].Message.ID || m.LeaseOwner != "node-1" || m.Attempts != 1 || !m.NextAttemptAt.Equal(lease) {
			t.Errorf("handed over %+v, want message %d leased to node-1 until %v", m, i, lease)
		}
		stored, err := f.st.MessageByID(ctx, m.ID)
		if err != nil || stored.LeaseOwner != "node-1" || !stored.NextAttemptAt.Equal(lease) || stored.Attempts != 1 {
			t.Errorf("stored %+v (%v), want leased to node-1 until %v", stored, err, lease)
		}
	}
	if n := wakes.Load(); n != 0 {
		t.Errorf("%d wakes for messages handed over in memory, want none (no claim)", n)
	}
	if claimed, err := f.st.ClaimDue(ctx, "node-2", f.clock(), time.Minute, 10); err != nil || len(claimed) != 0 {
		t.Fatalf("another node claimed %d leased messages (%v)", len(claimed), err)
	}
	claimed, err := f.st.ClaimDue(ctx, "node-2", lease.Add(time.Millisecond), time.Minute, 10)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("after the lease another node claimed %d (%v), want 2", len(claimed), err)
	}
}

// TestHandoffOverflowReleases: what the dispatcher's queue cannot take is
// released to the table at once (the queue then wakes itself to claim it:
// see the lease package's tests), not left to its lease.
func TestHandoffOverflowReleases(t *testing.T) {
	f, got, wakes, out := sendTwoHandedOff(t, 1)
	ctx := context.Background()
	if len(got) != 1 || got[0].ID != out.Receipt.Messages[0].Message.ID {
		t.Fatalf("queue got %v, want the first message", got)
	}
	if wakes.Load() != 0 {
		t.Errorf("%d wakes of the service, want none: the queue wakes itself", wakes.Load())
	}
	claimed, err := f.st.ClaimDue(ctx, "node-2", f.clock(), time.Minute, 10)
	if err != nil || len(claimed) != 1 || claimed[0].ID != out.Receipt.Messages[1].Message.ID {
		t.Fatalf("claimable now: %v (%v), want only the released second message", claimed, err)
	}
}

// countingClaimer counts the dispatcher's claims.
type countingClaimer struct {
	Claimer
	claims atomic.Int64
}

func (c *countingClaimer) ClaimDue(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]domain.Message, error) {
	c.claims.Add(1)
	return c.Claimer.ClaimDue(ctx, owner, now, lease, limit)
}

// TestDispatcherTakesEnqueued: a running dispatcher hands over what it is
// given in memory without claiming from the table.
func TestDispatcherTakesEnqueued(t *testing.T) {
	sms := &fakeProvider{name: "sms-co"}
	routes := fakeRoutes{domain.SMS: sms}
	f := newFixture(t, routes, "", false)
	claimer := &countingClaimer{Claimer: f.st}
	f.disp = NewDispatcher(DispatcherConfig{Store: claimer, Routes: routes, Tracker: f.tracker, Owner: "node-1", Now: f.clock,
		Poll: time.Hour, Workers: 1, Log: quietLog()})
	f.handoffTo(t, routes, f.disp.Queue(), func(msgs []domain.Message) {
		if len(msgs) != 1 {
			t.Errorf("dispatcher took %d of 1", len(msgs))
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); f.disp.Run(ctx) }()
	defer func() { cancel(); wg.Wait() }()
	waitUntil(t, "the first claim at start", func() bool { return claimer.claims.Load() >= 1 })
	before := claimer.claims.Load()
	id := f.send(t, intaketest.Draft{To: "5511999990010", Text: "hi", Type: "SMS"})
	waitUntil(t, "the message to be sent", func() bool {
		m, err := f.st.MessageByID(context.Background(), id)
		return err == nil && m.Status == domain.Sent
	})
	if len(sms.submitted()) != 1 {
		t.Errorf("provider got %d messages, want 1", len(sms.submitted()))
	}
	if n := claimer.claims.Load() - before; n != 0 {
		t.Errorf("%d claims for a message handed over in memory, want 0", n)
	}
}

// waitUntil polls cond, which may query the store, until it holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	polltest.For(t, what, polltest.Within, cond)
}

// TestDispatcherPollsTableWhileBusy: messages arriving in memory without a
// pause must not keep the dispatcher from the table, where retries,
// scheduled messages and a dead node's lapsed leases wait.
func TestDispatcherPollsTableWhileBusy(t *testing.T) {
	sms := &fakeProvider{name: "sms-co"}
	routes := fakeRoutes{domain.SMS: sms}
	f := newFixture(t, routes, "", false)
	f.disp = NewDispatcher(DispatcherConfig{Store: f.st, Routes: routes, Tracker: f.tracker, Owner: "node-1", Now: f.clock,
		Poll: 50 * time.Millisecond, Workers: 1, Log: quietLog()})
	leasetest.Run(t, f.disp.Run)
	// A steady stream handed over in memory, far more often than the poll
	// (messages no row backs: the tracker ignores their reports).
	leasetest.Stream(t, f.disp.Queue(), func(i int) domain.Message {
		return domain.Message{ID: fmt.Sprintf("msg_stream_%d", i), Env: domain.Live, Type: domain.SMS, Channel: domain.SMS,
			To: "5511999990010", LeaseOwner: "node-1", NextAttemptAt: f.clock().Add(time.Minute), ExpiresAt: f.clock().Add(time.Hour)}
	})
	waitUntil(t, "the stream to flow", func() bool { return len(sms.submitted()) > 5 })
	// The fixture's service writes messages unleased and wakes nobody: the
	// table is the only way to this one.
	id := f.send(t, intaketest.Draft{To: "5511999990099", Text: "from the table", Type: "SMS"})
	waitUntil(t, "the message due in the table to be handed over", func() bool {
		m, err := f.st.MessageByID(context.Background(), id)
		return err == nil && m.Status == domain.Sent
	})
}
