package dispatch

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake/intaketest"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/tracking"
)

// A receipt whose reference the provider announced waits, unacknowledged,
// for the hand-over's record instead of being parked, and is applied right
// after it.
func TestAnnouncedReceiptWaitsForItsHandOver(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, fakeRoutes{domain.SMS: &fakeProvider{name: "smsc"}}, "", false)
	mid := f.send(t, intaketest.Draft{To: "5511999990010", Text: "hi", Type: "SMS"})
	// fakeProvider answers with Ref "ref-<id>", as the SMPP client would
	// announce it while reading the answer.
	f.tracker.Expect("smsc", "ref-"+mid)
	done := make(chan error, 1)
	go func() {
		done <- f.tracker.Statuses(ctx, "smsc", []provider.Status{{Ref: "ref-" + mid, Status: domain.Delivered}})
	}()
	waitFor(t, "the receipt to wait", func() bool { _, w, _ := f.tracker.Expecting(); return w == 1 })
	select {
	case err := <-done:
		t.Fatalf("the receipt was taken (%v) before its hand-over was recorded", err)
	default:
	}
	if m, _ := f.st.Message(ctx, f.caller.Account.ID, f.caller.Key.Env, mid); m.Status != domain.Sending {
		t.Fatalf("status %s before the hand-over", m.Status)
	}
	f.dispatch(t)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the receipt still waits after the hand-over was recorded")
	}
	m, _ := f.st.Message(ctx, f.caller.Account.ID, f.caller.Key.Env, mid)
	if m.Status != domain.Delivered || m.SentAt.IsZero() {
		t.Fatalf("status %s, want DELIVERED with SENT before it", m.Status)
	}
	if refs, err := f.st.KnownParkedRefs(ctx, 10); err != nil || len(refs) != 0 {
		t.Fatalf("parked reports %v (%v), want none", refs, err)
	}
	n, w, c := f.tracker.Expecting()
	if n != 0 || w != 0 {
		t.Fatalf("%d references still expected, %d receipts waiting", n, w)
	}
	// It rode with the record of its hand-over: one transaction took both.
	if c != 1 {
		t.Fatalf("%d records carried riders, want 1", c)
	}
	evs, err := f.st.EventsForMessage(ctx, f.caller.Account.ID, mid)
	if err != nil || len(evs) != 2 || !strings.Contains(evs[0].Body, `"SENT"`) || !strings.Contains(evs[1].Body, `"DELIVERED"`) {
		t.Fatalf("events %v (%v), want SENT then DELIVERED", evs, err)
	}
}

// A receipt that rode with a hand-over whose report did not record its id
// (the report was refused: here, its lease was another node's) is parked,
// as if it had come alone, not applied to the message.
func TestAstrayRiderIsParked(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, fakeRoutes{domain.SMS: &fakeProvider{name: "smsc"}}, "", false)
	mid := f.send(t, intaketest.Draft{To: "5511999990010", Text: "hi", Type: "SMS"})
	now := f.clock()
	reports := []tracking.Report{
		{Kind: tracking.Accepted, MessageID: mid, Provider: "smsc", Ref: "r1", At: now, LeaseOwner: "another-node"},
		{Kind: tracking.Progress, MessageID: mid, Provider: "smsc", Ref: "r1", Follows: "r1", Status: domain.Delivered, At: now},
	}
	if err := f.tracker.Apply(ctx, reports); err != nil {
		t.Fatal(err)
	}
	if m, _ := f.st.Message(ctx, f.caller.Account.ID, f.caller.Key.Env, mid); m.Status != domain.Sending {
		t.Fatalf("status %s, want SENDING: neither report belonged", m.Status)
	}
	var parked []domain.PendingReport
	if err := f.st.Write(ctx, func(tx *store.Tx) error {
		var err error
		parked, err = tx.TakePendingReports(ctx, "smsc", []string{"r1"})
		return err
	}); err != nil || len(parked) != 1 || parked[0].Status != domain.Delivered {
		t.Fatalf("parked %v (%v), want the DELIVERED receipt", parked, err)
	}
}

// When the announced hand-over is not recorded within the hold, the
// receipt goes the slow way: parked, and applied once the reference is
// recorded.
func TestAnnouncedReceiptStopsWaiting(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, fakeRoutes{domain.SMS: &fakeProvider{name: "smsc"}}, "", false)
	f.useTracker(t, 20*time.Millisecond)
	mid := f.send(t, intaketest.Draft{To: "5511999990010", Text: "hi", Type: "SMS"})
	f.tracker.Expect("smsc", "ref-"+mid)
	if err := f.tracker.Statuses(ctx, "smsc", []provider.Status{{Ref: "ref-" + mid, Status: domain.Delivered}}); err != nil {
		t.Fatal(err)
	}
	if m, _ := f.st.Message(ctx, f.caller.Account.ID, f.caller.Key.Env, mid); m.Status != domain.Sending {
		t.Fatalf("status %s before the hand-over", m.Status)
	}
	f.dispatch(t)
	if m, _ := f.st.Message(ctx, f.caller.Account.ID, f.caller.Key.Env, mid); m.Status != domain.Delivered {
		t.Fatalf("status %s after the hand-over, want DELIVERED from the parked receipt", m.Status)
	}
	if n, _, _ := f.tracker.Expecting(); n != 0 {
		t.Fatalf("%d references still expected after the hand-over", n)
	}
}

// waitFor polls cond until it holds; the test fails after 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
