package lease

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/polltest"
)

// item is a row as a handler gets it: its id and the end of its lease.
type item struct {
	id    string
	until time.Time
}

// table is a queue table in memory: rows are due from due on, a claim
// leases them, a release makes them due at once, and a handled row is
// done (as a recorded outcome would leave it).
type table struct {
	mu       sync.Mutex
	order    []string
	rows     map[string]*row
	claims   int
	released []string
}

type row struct {
	owner string
	due   time.Time
	done  bool
}

func newTable() *table { return &table{rows: map[string]*row{}} }

// add writes a row due at due, leased to owner when owner is set.
func (tb *table) add(id, owner string, due time.Time) item {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.order = append(tb.order, id)
	tb.rows[id] = &row{owner: owner, due: due}
	return item{id, due}
}

func (tb *table) claim(_ context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]item, error) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.claims++
	var out []item
	for _, id := range tb.order {
		if len(out) == limit {
			break
		}
		r := tb.rows[id]
		if !r.done && !r.due.After(now) {
			r.owner, r.due = owner, now.Add(lease)
			out = append(out, item{id, r.due})
		}
	}
	return out, nil
}

func (tb *table) release(_ context.Context, owner string, ids []string, now time.Time) error {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, id := range ids {
		if r := tb.rows[id]; r != nil && r.owner == owner && !r.done {
			r.owner, r.due = "", now
			tb.released = append(tb.released, id)
		}
	}
	return nil
}

func (tb *table) claimCount() int {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.claims
}

func (tb *table) releasedIDs() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]string(nil), tb.released...)
}

// handled counts the Handler's calls per item and marks the rows done.
type handled struct {
	tb      *table
	mu      sync.Mutex
	count   map[string]int
	running atomic.Int64
	most    atomic.Int64 // the most Handler calls running at once
	biggest atomic.Int64 // the most items in one call
	gate    chan struct{}
}

func newHandled(tb *table) *handled { return &handled{tb: tb, count: map[string]int{}} }

func (h *handled) handle(_ context.Context, items []item) error {
	n := h.running.Add(1)
	defer h.running.Add(-1)
	for m := h.most.Load(); n > m && !h.most.CompareAndSwap(m, n); m = h.most.Load() {
	}
	for b := h.biggest.Load(); int64(len(items)) > b && !h.biggest.CompareAndSwap(b, int64(len(items))); b = h.biggest.Load() {
	}
	if h.gate != nil {
		<-h.gate
	}
	h.mu.Lock()
	for _, it := range items {
		h.count[it.id]++
	}
	h.mu.Unlock()
	h.tb.mu.Lock()
	for _, it := range items {
		h.tb.rows[it.id].done = true
	}
	h.tb.mu.Unlock()
	return nil
}

func (h *handled) times(id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count[id]
}

func (h *handled) total() (items, calls int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range h.count {
		items++
		calls += n
	}
	return items, calls
}

// fakeTicker ticks when the test says so.
type fakeTicker struct{ c chan time.Time }

func (f *fakeTicker) C() <-chan time.Time { return f.c }
func (f *fakeTicker) Stop()               {}

func (f *fakeTicker) tick() {
	select {
	case f.c <- time.Time{}:
	default:
	}
}

// clock is a clock the test moves.
type clock struct{ ms atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ms.Store(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC).UnixMilli())
	return c
}

func (c *clock) now() time.Time          { return time.UnixMilli(c.ms.Load()).UTC() }
func (c *clock) advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

type fixture struct {
	tb     *table
	clk    *clock
	ticker *fakeTicker
	h      *handled
	q      *Queue[item]
}

func newFixture(c Config[item]) *fixture {
	f := &fixture{tb: newTable(), clk: newClock(), ticker: &fakeTicker{c: make(chan time.Time, 1)}}
	f.h = newHandled(f.tb)
	c.Name, c.Owner, c.Lease = "items", "node-1", time.Minute
	c.Claim, c.Release = f.tb.claim, f.tb.release
	c.ID = func(it item) string { return it.id }
	c.Now = f.clk.now
	c.NewTicker = func(time.Duration) Ticker { return f.ticker }
	c.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	f.q = New(c)
	return f
}

// run starts the queue; it returns the cancel of its context and a
// channel closed when Run has returned.
func (f *fixture) run(t *testing.T) (context.CancelFunc, <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.q.Run(ctx, f.h.handle) }()
	t.Cleanup(func() { cancel(); <-done })
	return cancel, done
}

// leased writes n rows leased to node-1 at insert, as a writer that hands
// them over does.
func (f *fixture) leased(prefix string, n int) []item {
	out := make([]item, n)
	for i := range out {
		out[i] = f.tb.add(fmt.Sprintf("%s_%d", prefix, i), "node-1", f.clk.now().Add(time.Minute))
	}
	return out
}

var waitFor = polltest.Until

// Items handed over are handled without a claim: the only claim is the
// one at start.
func TestHandedItemsNeedNoClaim(t *testing.T) {
	f := newFixture(Config[item]{Workers: 2})
	f.run(t)
	waitFor(t, "the claim at start", func() bool { return f.tb.claimCount() == 1 })
	items := f.leased("msg", 100)
	if n := f.q.Hand(context.Background(), items); n != 100 {
		t.Fatalf("Hand took %d of 100", n)
	}
	waitFor(t, "every item handled", func() bool { n, _ := f.h.total(); return n == 100 })
	if n := f.tb.claimCount(); n != 1 {
		t.Errorf("%d claims, want only the one at start", n)
	}
	if _, calls := f.h.total(); calls != 100 {
		t.Errorf("%d handlings of 100 items", calls)
	}
}

// What the in-memory queue cannot take goes back to the table at once and
// the queue is woken to claim it: no tick is needed, no lease must end.
func TestFullQueueReleasesAndWakes(t *testing.T) {
	f := newFixture(Config[item]{Room: 2, Workers: 1})
	f.h.gate = make(chan struct{})
	f.run(t)
	waitFor(t, "the claim at start", func() bool { return f.tb.claimCount() == 1 })
	first := f.leased("first", 1)
	f.q.Hand(context.Background(), first)
	waitFor(t, "the first item to be in the handler", func() bool { return f.h.running.Load() == 1 })
	rest := f.leased("rest", 5)
	if n := f.q.Hand(context.Background(), rest); n != 2 {
		t.Fatalf("Hand kept %d in memory, want 2 (its room)", n)
	}
	if got := f.tb.releasedIDs(); len(got) != 3 || got[0] != "rest_2" || got[2] != "rest_4" {
		t.Fatalf("released %v, want rest_2..rest_4", got)
	}
	close(f.h.gate)
	waitFor(t, "all six items handled", func() bool { n, _ := f.h.total(); return n == 6 })
	if n := f.tb.claimCount(); n < 2 {
		t.Errorf("%d claims: the released rows were not claimed on a wake", n)
	}
	for _, it := range append(first, rest...) {
		if n := f.h.times(it.id); n != 1 {
			t.Errorf("%s handled %d times", it.id, n)
		}
	}
}

// The table is looked at on every poll, also while items keep arriving
// in memory and every worker is busy with them.
func TestPollClaimsDueRowsWhileBusy(t *testing.T) {
	f := newFixture(Config[item]{Workers: 1, Batch: 4})
	f.run(t)
	waitFor(t, "the claim at start", func() bool { return f.tb.claimCount() == 1 })
	later := f.tb.add("scheduled", "", f.clk.now().Add(time.Hour))
	stop := make(chan struct{})
	streamed := make(chan struct{})
	go func() {
		defer close(streamed)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			f.q.Hand(context.Background(), []item{f.tb.add(fmt.Sprintf("stream_%d", i), "node-1", f.clk.now().Add(time.Minute))})
		}
	}()
	defer func() { close(stop); <-streamed }()
	f.ticker.tick()
	waitFor(t, "a claim on the tick", func() bool { return f.tb.claimCount() >= 2 })
	if f.h.times(later.id) != 0 {
		t.Fatal("a row not yet due was handled")
	}
	f.clk.advance(time.Hour)
	waitFor(t, "the scheduled row, due now, handled on a poll", func() bool {
		f.ticker.tick()
		return f.h.times(later.id) == 1
	})
}

// A full batch claimed means more may be due: the queue claims again
// without waiting for the next poll.
func TestFullBatchClaimsAgain(t *testing.T) {
	f := newFixture(Config[item]{Workers: 2, Batch: 3})
	for i := range 10 {
		f.tb.add(fmt.Sprintf("due_%d", i), "", f.clk.now())
	}
	f.run(t)
	waitFor(t, "the ten due rows handled", func() bool { n, _ := f.h.total(); return n == 10 })
	if _, calls := f.h.total(); calls != 10 {
		t.Errorf("%d handlings of 10 rows", calls)
	}
	if b := f.h.biggest.Load(); b > 3 {
		t.Errorf("a handler got %d items, more than a batch of 3", b)
	}
}

// At stop, the Handler calls running finish, and the items still waiting
// in memory go back to the table; what is handed over after the stop goes
// straight there.
func TestStopReleasesLeftovers(t *testing.T) {
	f := newFixture(Config[item]{Workers: 1, Chunk: 1})
	f.h.gate = make(chan struct{})
	cancel, stopped := f.run(t)
	items := f.leased("msg", 5)
	f.q.Hand(context.Background(), items)
	waitFor(t, "the first item in the handler", func() bool { return f.h.running.Load() == 1 })
	cancel()
	close(f.h.gate)
	<-stopped
	if n := f.h.times("msg_0"); n != 1 {
		t.Fatalf("the item in the handler at stop was handled %d times, want 1 (finished)", n)
	}
	if n, _ := f.h.total(); n != 1 {
		t.Errorf("%d items handled, want only the one running at stop", n)
	}
	if got := f.tb.releasedIDs(); fmt.Sprint(got) != "[msg_1 msg_2 msg_3 msg_4]" {
		t.Errorf("released %v at stop, want msg_1..msg_4", got)
	}
	late := f.leased("late", 1)
	if n := f.q.Hand(context.Background(), late); n != 0 {
		t.Errorf("a stopped queue kept %d items", n)
	}
	if got := f.tb.releasedIDs(); got[len(got)-1] != "late_0" {
		t.Errorf("an item handed to a stopped queue was not released: %v", got)
	}
}

// Chunk 1 hands every item to its own Handler call, at most Workers at
// once.
func TestChunksAndWorkersBound(t *testing.T) {
	f := newFixture(Config[item]{Workers: 4, Chunk: 1})
	f.run(t)
	f.q.Hand(context.Background(), f.leased("evt", 200))
	waitFor(t, "every item handled", func() bool { n, _ := f.h.total(); return n == 200 })
	if b := f.h.biggest.Load(); b != 1 {
		t.Errorf("a Handler call got %d items, want 1", b)
	}
	if m := f.h.most.Load(); m > 4 {
		t.Errorf("%d Handler calls at once, want at most 4", m)
	}
}

// Two nodes on one table, each with rows handed over in memory, rows due
// in the table and rows released to it when memory is full: every row is
// handled, none twice.
func TestNoItemHandledTwice(t *testing.T) {
	tb := newTable()
	clk := newClock()
	h := newHandled(tb)
	var queues []*Queue[item]
	var tickers []*fakeTicker
	for _, owner := range []string{"node-1", "node-2"} {
		tk := &fakeTicker{c: make(chan time.Time, 1)}
		tickers = append(tickers, tk)
		queues = append(queues, New(Config[item]{Name: "items", Owner: owner, Lease: time.Minute, Claim: tb.claim,
			Release: tb.release, ID: func(it item) string { return it.id }, Workers: 3, Batch: 7, Chunk: 2, Room: 16,
			Now: clk.now, NewTicker: func(time.Duration) Ticker { return tk }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	}
	for i := range 300 {
		tb.add(fmt.Sprintf("due_%d", i), "", clk.now())
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, q := range queues {
		wg.Add(1)
		go func() { defer wg.Done(); q.Run(ctx, h.handle) }()
	}
	var writers sync.WaitGroup
	for w, q := range queues {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := range 100 {
				var batch []item
				for j := range 5 {
					batch = append(batch, tb.add(fmt.Sprintf("hand_%d_%d_%d", w, i, j), q.Owner(), clk.now().Add(time.Minute)))
				}
				q.Hand(context.Background(), batch)
			}
		}()
	}
	writers.Wait()
	waitFor(t, "every row handled", func() bool {
		for _, tk := range tickers {
			tk.tick()
		}
		n, _ := h.total()
		return n == 1300
	})
	cancel()
	wg.Wait()
	if n, calls := h.total(); calls != n {
		t.Errorf("%d handlings of %d rows", calls, n)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, n := range h.count {
		if n != 1 {
			t.Errorf("%s handled %d times", id, n)
		}
	}
}

// ClaimOnce claims one batch and handles it before it returns.
func TestClaimOnce(t *testing.T) {
	f := newFixture(Config[item]{Batch: 2})
	for i := range 3 {
		f.tb.add(fmt.Sprintf("due_%d", i), "", f.clk.now())
	}
	for _, want := range []int{2, 1, 0} {
		n, err := f.q.ClaimOnce(context.Background(), f.h.handle)
		if err != nil || n != want {
			t.Fatalf("ClaimOnce = %d, %v; want %d", n, err, want)
		}
	}
	if n, calls := f.h.total(); n != 3 || calls != 3 {
		t.Errorf("handled %d rows in %d handlings, want 3 once each", n, calls)
	}
}

func TestFIFOKeepsOrderAcrossCompaction(t *testing.T) {
	var f fifo[int]
	next, want := 0, 0
	for round := range 50 {
		for range round % 7 {
			f.push([]int{next})
			next++
		}
		for _, v := range f.take(round % 5) {
			if v != want {
				t.Fatalf("took %d, want %d", v, want)
			}
			want++
		}
	}
	for _, v := range f.take(f.len()) {
		if v != want {
			t.Fatalf("took %d, want %d", v, want)
		}
		want++
	}
	if want != next {
		t.Fatalf("took %d of %d", want, next)
	}
}

// An item whose lease ended while it waited in memory is not handled from
// memory: its row is due in the table, where the queue (woken) claims it,
// so it is handled once, not once from each.
func TestLapsedItemsInMemoryAreLeftToTheClaim(t *testing.T) {
	f := newFixture(Config[item]{Workers: 1, Until: func(it item) time.Time { return it.until }})
	f.h.gate = make(chan struct{})
	f.run(t)
	waitFor(t, "the claim at start", func() bool { return f.tb.claimCount() == 1 })
	busy := f.leased("busy", 1)
	f.q.Hand(context.Background(), busy)
	waitFor(t, "the first item in the handler", func() bool { return f.h.running.Load() == 1 })
	waiting := f.leased("waiting", 3)
	f.q.Hand(context.Background(), waiting)
	f.clk.advance(2 * time.Minute) // their lease (a minute) ends while they wait
	close(f.h.gate)
	waitFor(t, "all four items handled", func() bool { n, _ := f.h.total(); return n == 4 })
	for _, it := range append(busy, waiting...) {
		if n := f.h.times(it.id); n != 1 {
			t.Errorf("%s handled %d times, want once", it.id, n)
		}
	}
	if n := f.tb.claimCount(); n < 2 {
		t.Errorf("%d claims: the lapsed rows were not claimed from the table", n)
	}
}

// A worker that ends its call wakes the loop only when work waits for a
// worker: with nothing waiting, every webhook's end would wake the loop
// for nothing. When the loop sleeps with items waiting in memory, the end
// must wake it; and when a worker came free just before the loop would
// sleep, the loop must look again instead of sleeping.
func TestWorkerEndWakesTheLoopOnlyWhenWorkWaits(t *testing.T) {
	f := newFixture(Config[item]{Workers: 1, Chunk: 1})
	f.h.gate = make(chan struct{}, 3)
	r := &run[item]{q: f.q, ctx: context.Background(), h: f.h.handle, idle: make(chan []item)}
	t.Cleanup(func() { close(r.idle) }) // ends the lingering worker
	pending := func() bool {
		select {
		case <-f.q.ready:
			return true
		default:
			return false
		}
	}
	first := f.leased("first", 1)
	r.start(first) // as the loop does: a slot, a worker
	f.h.gate <- struct{}{}
	r.running.Wait()
	if pending() {
		t.Fatal("a call's end with nothing waiting woke the loop")
	}

	// The worker is busy; an item is handed over and waits for it.
	r.start(f.leased("busy", 1))
	f.q.Hand(context.Background(), f.leased("waiting", 1))
	pending() // Hand's own wake, which the loop would have taken
	if !r.sleep(false) {
		t.Fatal("the loop would not sleep, with its only worker busy")
	}
	f.h.gate <- struct{}{}
	r.running.Wait()
	if !pending() {
		t.Fatal("the busy worker's end did not wake the loop, with an item waiting for it")
	}
	// Now the worker is free and the item still waits: the loop must not
	// sleep on it.
	if r.sleep(false) {
		t.Fatal("the loop would sleep with a free worker and an item waiting")
	}
	if r.takeMemory(r.free()) != 1 {
		t.Fatal("the waiting item was not taken")
	}
	f.h.gate <- struct{}{}
	r.running.Wait()
	if !r.sleep(false) {
		t.Fatal("the loop would not sleep with nothing left")
	}
	if pending() {
		t.Fatal("a call's end woke the loop after it was told nothing waits")
	}
	if n, calls := f.h.total(); n != 3 || calls != 3 {
		t.Fatalf("%d items in %d calls, want 3 in 3", n, calls)
	}
}
