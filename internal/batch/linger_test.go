package batch

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeTimers hands each wait of a batcher to the test, which fires it.
type fakeTimers struct {
	waits chan chan time.Time
	asked atomic.Int32
}

func newFakeTimers() *fakeTimers { return &fakeTimers{waits: make(chan chan time.Time, 16)} }

func (f *fakeTimers) after(time.Duration) <-chan time.Time {
	f.asked.Add(1)
	ch := make(chan time.Time, 1)
	f.waits <- ch
	return ch
}

// next returns the wait the batcher asked for, failing the test if it
// asks for none within a deadline.
func (f *fakeTimers) next(t *testing.T) chan time.Time {
	t.Helper()
	select {
	case ch := <-f.waits:
		return ch
	case <-time.After(10 * time.Second):
		t.Fatal("the batcher never started a wait")
		return nil
	}
}

// doAsync runs Do in a goroutine and reports its result on the channel.
func doAsync(ctx context.Context, b *Batcher[int, int], item int) chan error {
	done := make(chan error, 1)
	go func() {
		_, err := b.Do(ctx, item)
		done <- err
	}()
	return done
}

func waitDone(t *testing.T, done chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an item was never answered")
	}
}

// lingering starts a batcher of one loop that lingers for a company of
// three, on timers the test fires, and closes it when the test ends.
func lingering(t *testing.T) (*groupsOf, *fakeTimers, *Batcher[int, int]) {
	g, timers := &groupsOf{}, newFakeTimers()
	b := New(g.fn, 8, 1, Linger(time.Hour, 3), Timer(timers.after))
	t.Cleanup(b.Close)
	return g, timers, b
}

// TestLingerGathersPatientItemsUntilCompany: a group of patient items
// waits for more until it has company, and runs as soon as it has.
func TestLingerGathersPatientItemsUntilCompany(t *testing.T) {
	g, timers, b := lingering(t)
	ctx := Patient(context.Background())
	first := doAsync(ctx, b, 1)
	timers.next(t) // the loop lingers for the first item; never fired
	second, third := doAsync(ctx, b, 2), doAsync(ctx, b, 3)
	waitDone(t, first)
	waitDone(t, second)
	waitDone(t, third)
	got := g.all()
	if len(got) != 1 || len(got[0]) != 3 {
		t.Fatalf("groups %v, want one group of the three items", got)
	}
}

// TestLingerEndsWhenItsTimeIsUp: alone, a patient item runs when the
// linger ends.
func TestLingerEndsWhenItsTimeIsUp(t *testing.T) {
	g, timers, b := lingering(t)
	done := doAsync(Patient(context.Background()), b, 1)
	wait := timers.next(t)
	select {
	case err := <-done:
		t.Fatalf("answered (%v) before the linger ended", err)
	default:
	}
	wait <- time.Time{}
	waitDone(t, done)
	if got := g.all(); !slices.EqualFunc(got, [][]int{{1}}, slices.Equal[[]int]) {
		t.Fatalf("groups %v, want [[1]]", got)
	}
}

// TestLingerNeverDelaysAWaitingCaller: an item whose caller waits for
// it (not patient) runs at once, without a wait, however small its group.
func TestLingerNeverDelaysAWaitingCaller(t *testing.T) {
	g, timers, b := lingering(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 5 {
		if _, err := b.Do(ctx, i); err != nil {
			t.Fatalf("item %d: %v (kept waiting for company)", i, err)
		}
	}
	if n := timers.asked.Load(); n != 0 {
		t.Fatalf("the loop waited %d times for company of items whose callers wait", n)
	}
	if got := g.all(); len(got) != 5 {
		t.Fatalf("groups %v, want five groups of one", got)
	}
}

// TestLingerEndsWhenAWaitingCallerJoins: a lingering group runs as soon
// as an item whose caller waits joins it.
func TestLingerEndsWhenAWaitingCallerJoins(t *testing.T) {
	g, timers, b := lingering(t)
	patient := doAsync(Patient(context.Background()), b, 1)
	timers.next(t) // never fired
	if _, err := b.Do(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	waitDone(t, patient)
	got := g.all()
	if len(got) != 1 || !slices.Equal(got[0], []int{1, 2}) {
		t.Fatalf("groups %v, want [[1 2]]", got)
	}
}

// TestHoldWaitsOnlyBehindAGroupUnderWay: the first group of a NewLate
// batcher with Hold queues at once; a group that opens while it runs
// waits for the hold, gathering what arrives meanwhile, and its
// function runs with a patient context.
func TestHoldWaitsOnlyBehindAGroupUnderWay(t *testing.T) {
	timers := newFakeTimers()
	release := make(chan struct{})
	var mu sync.Mutex
	var groups [][]int
	var patient []bool
	started := make(chan struct{}, 4)
	b := NewLate(func(ctx context.Context, take func() []int) ([]int, error) {
		items := take()
		// Recorded before the test hears the group started: the test
		// then starts the next group, which must find this one recorded
		// (or it would count itself first, and wait for the release).
		mu.Lock()
		groups = append(groups, slices.Clone(items))
		patient = append(patient, ctx.Value(patientKey{}) != nil)
		first := len(groups) == 1
		mu.Unlock()
		started <- struct{}{}
		if first {
			<-release // the first group is still under way
		}
		return items, nil
	}, 64, 2, Hold(time.Hour), Timer(timers.after))
	defer b.Close()
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock() // before Close, if the test fails early
	first := doAsync(context.Background(), b, 1)
	<-started
	if n := timers.asked.Load(); n != 0 {
		t.Fatalf("the first group waited %d times with no group under way", n)
	}
	second := doAsync(context.Background(), b, 2)
	wait := timers.next(t) // the second group holds
	third := doAsync(context.Background(), b, 3)
	waitFor(t, "the third item to queue behind the held group", func() bool { return len(b.in) == 1 })
	select {
	case <-started:
		t.Fatal("the held group ran before its hold ended")
	default:
	}
	wait <- time.Time{}
	waitDone(t, second)
	waitDone(t, third)
	unblock()
	waitDone(t, first)
	mu.Lock()
	defer mu.Unlock()
	if len(groups) != 2 || !slices.Equal(groups[1], []int{2, 3}) {
		t.Fatalf("groups %v, want [[1] [2 3]]", groups)
	}
	if !patient[0] || !patient[1] {
		t.Fatalf("patient contexts %v, want every group's function patient", patient)
	}
}
