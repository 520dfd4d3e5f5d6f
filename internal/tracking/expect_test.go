package tracking

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
)

// Announcements whose record never comes are forgotten after the hold.
func TestStaleAnnouncementsAreDropped(t *testing.T) {
	var e expectations
	e.hold = time.Minute
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	e.expect("p", "a", t0)
	e.expect("p", "b", t0.Add(30*time.Second))
	e.recorded([]Report{{Kind: Accepted, Provider: "p", Ref: "b"}}, nil)
	e.expect("p", "c", t0.Add(61*time.Second))
	if n, _ := e.state(); n != 1 || len(e.queue) != 1 || e.queue[0].ref != "c" {
		t.Fatalf("expected %d, queue %v; want only c", n, e.queue)
	}
}

// A record waits for the receipts of the references it announced, and
// stops as soon as each has one: they ride with it.
func TestRecordWaitsForAnnouncedReceipts(t *testing.T) {
	var e expectations
	e.wait = time.Minute // only the riders end this wait
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	e.expect("p", "a", t0)
	e.expect("p", "b", t0)
	handOver := []Report{
		{Kind: Accepted, MessageID: "m1", Provider: "p", Ref: "a"},
		{Kind: Accepted, MessageID: "m2", Provider: "p", Ref: "b"},
	}
	done := make(chan []Report, 1)
	go func() {
		e.await(context.Background(), handOver)
		done <- e.take(handOver)
	}()
	// Each receipt comes once the record waits for it, so that only the
	// wait can make it ride.
	for _, ref := range []string{"a", "b"} {
		polltest.Until(t, "the record to wait for "+ref, func() bool {
			e.mu.Lock()
			defer e.mu.Unlock()
			return e.refs[expectKey{"p", ref}].rode != nil
		})
		rest, riding, _ := e.ride(new(int), []Report{{Kind: Progress, Provider: "p", Ref: ref, Status: domain.Delivered}})
		if len(rest) != 0 || len(riding) != 1 {
			t.Fatalf("receipt for %s: rest %v, riding %d; want it riding", ref, rest, len(riding))
		}
	}
	var riders []Report
	select {
	case riders = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the record still waits after every receipt came")
	}
	if len(riders) != 2 || riders[0].MessageID != "m1" || riders[1].MessageID != "m2" {
		t.Fatalf("riders %+v, want the receipts of m1 and m2", riders)
	}
	if got := e.paces["p"].trust; got != 2 {
		t.Fatalf("trust %d after a wait that paid, want 2", got)
	}
}

// A record whose receipts do not come within the wait goes without them,
// and after two such waits its provider's records stop waiting, but for
// one in paceProbe, which finds out whether its receipts became fast.
func TestRecordStopsWaitingForSlowReceipts(t *testing.T) {
	var e expectations
	e.wait = time.Millisecond
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	n := 0
	record := func() bool { // whether the record waited
		n++
		ref := fmt.Sprint("r", n)
		e.expect("slow", ref, t0)
		handOver := []Report{{Kind: Accepted, MessageID: "m" + ref, Provider: "slow", Ref: ref}}
		skipped := 0
		if pc := e.paces["slow"]; pc != nil {
			skipped = pc.skipped
		}
		e.await(context.Background(), handOver)
		if riders := e.take(handOver); len(riders) != 0 {
			t.Fatalf("record %d took riders %v", n, riders)
		}
		e.recorded(handOver, nil)
		return e.paces["slow"].skipped != skipped+1
	}
	if !record() {
		t.Fatal("the first record of a provider did not wait")
	}
	if e.paces["slow"].trust != 0 {
		t.Fatalf("trust %d after a wait that did not pay, want 0", e.paces["slow"].trust)
	}
	for i := 1; i < 2*paceProbe; i++ {
		if waited := record(); waited != (i == paceProbe) {
			t.Fatalf("record %d waited %v", n, waited)
		}
	}
}

// A record does not wait for a reference that already has its receipt,
// nor for a provider that announced nothing.
func TestRecordDoesNotWaitForWhatCame(t *testing.T) {
	var e expectations
	e.wait = time.Minute
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	e.expect("p", "a", t0)
	e.ride(new(int), []Report{{Kind: Progress, Provider: "p", Ref: "a", Status: domain.Delivered}})
	handOver := []Report{
		{Kind: Accepted, MessageID: "m1", Provider: "p", Ref: "a"},
		{Kind: Accepted, MessageID: "m2", Provider: "http", Ref: "z"},
	}
	done := make(chan struct{})
	go func() {
		e.await(context.Background(), handOver)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the record waits for a receipt that came, or for an unannounced reference")
	}
	if riders := e.take(handOver); len(riders) != 1 || riders[0].MessageID != "m1" {
		t.Fatalf("riders %+v, want the receipt of m1", riders)
	}
}

// Past maxRiding receipts waiting for their records, the next receipt does
// not ride: it is applied at once, so that its connection goes on being
// read (a record needs the provider's answers on that connection). One
// whose record is already under way still waits for it.
func TestRidersAreBounded(t *testing.T) {
	var e expectations
	e.hold = time.Minute // only a record, or the bound, ends a rider's wait
	e.maxRiding = 2
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for _, ref := range []string{"a", "b", "c"} {
		e.expect("p", ref, t0)
	}
	receipt := func(ref string) []Report {
		return []Report{{Kind: Progress, Provider: "p", Ref: ref, Status: domain.Delivered}}
	}
	applied := make(chan []Report, 8)
	apply := func(_ context.Context, rs []Report) error {
		if len(rs) > 0 { // a rider's call applies nothing of its own
			applied <- rs
		}
		return nil
	}
	ctx := context.Background()
	returned := make(chan string, 8)
	deliver := func(ref string) {
		go func() {
			if err := e.deliver(ctx, receipt(ref), apply); err != nil {
				t.Errorf("receipt %s: %v", ref, err)
			}
			returned <- ref
		}()
	}
	waiting := func(n int) {
		t.Helper()
		polltest.Until(t, fmt.Sprint(n, " receipts waiting"), func() bool {
			_, w := e.state()
			return w == n
		})
	}
	// returns expects the receipt for want to be the next to return.
	returns := func(want, stuck string) {
		t.Helper()
		select {
		case ref := <-returned:
			if ref != want {
				t.Fatalf("receipt %s returned, want %s", ref, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal(stuck)
		}
	}
	deliver("a")
	deliver("b")
	waiting(2)
	deliver("c")
	returns("c", "a third receipt waits for its record while two wait already")
	if rs := <-applied; len(rs) != 1 || rs[0].Ref != "c" {
		t.Fatalf("applied %+v, want c's receipt", rs)
	}

	// a's record takes its rider: a second receipt for a waits for it,
	// bound or not.
	recA := []Report{{Kind: Accepted, MessageID: "m1", Provider: "p", Ref: "a"}}
	if riders := e.take(recA); len(riders) != 1 || riders[0].MessageID != "m1" {
		t.Fatalf("a's record took %+v, want a's receipt for m1", riders)
	}
	deliver("a")
	waiting(3)
	e.recorded(recA, nil)
	returns("a", "a's receipts still wait after its record")
	returns("a", "a's second receipt still waits after its record")
	recB := []Report{{Kind: Accepted, MessageID: "m2", Provider: "p", Ref: "b"}}
	e.take(recB)
	e.recorded(recB, nil)
	returns("b", "b's receipt still waits after its record")
	select {
	case rs := <-applied:
		// The second receipt for a came after its record took the riders:
		// applied by its own call, after the record.
		if len(rs) != 1 || rs[0].Ref != "a" {
			t.Fatalf("applied %+v, want only a's second receipt", rs)
		}
	default:
		t.Fatal("a's second receipt was never applied")
	}
	if left, over := e.counts(); left != 0 || over != 1 {
		t.Fatalf("left behind %d, past the bound %d; want 0 and c's 1", left, over)
	}
}

// A receipt whose record does not come within the hold is applied on its
// own, and counted as left behind.
func TestRiderLeftBehindIsCounted(t *testing.T) {
	var e expectations
	e.hold = 10 * time.Millisecond
	e.expect("p", "z", time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC))
	var applied []Report
	err := e.deliver(context.Background(), []Report{{Kind: Progress, Provider: "p", Ref: "z", Status: domain.Delivered}},
		func(_ context.Context, rs []Report) error {
			applied = append(applied, rs...)
			return nil
		})
	if err != nil || len(applied) != 1 || applied[0].Ref != "z" {
		t.Fatalf("applied %+v (%v), want z's receipt", applied, err)
	}
	if left, over := e.counts(); left != 1 || over != 0 {
		t.Fatalf("left behind %d, past the bound %d; want 1 and 0", left, over)
	}
}
