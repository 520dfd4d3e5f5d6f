// Package lease runs a table's rows as a work queue shared by every node:
// a node claims due rows for a while (the lease) and handles them; rows a
// node wrote already leased to itself are handed to it in memory, without
// a claim. A node that dies needs no rescue: its rows come due again when
// their lease ends, and any node claims them.
//
// The package knows nothing of what the rows are. A user supplies the
// claim and the release of its table and a handler; messages waiting for a
// provider and webhook events waiting for their receiver are two such
// queues.
package lease

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// ClaimFunc leases up to limit due rows to owner until now+lease and
// returns them. Rows leased to another owner whose lease has not ended
// are not due.
type ClaimFunc[T any] func(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]T, error)

// ReleaseFunc makes rows leased to owner due again at now, for any node.
type ReleaseFunc func(ctx context.Context, owner string, ids []string, now time.Time) error

// Handler handles items leased to this node. It must finish what it is
// given: its context is not cancelled when the queue stops, because the
// lease is ours until it ends and another node waits for it.
type Handler[T any] func(ctx context.Context, items []T) error

// Ticker is the poll's ticker; tests inject one they drive.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Config sets up a Queue.
type Config[T any] struct {
	// Name names the rows in logs ("messages", "webhook events").
	Name string
	// Owner is this node's name in leases (unique per process).
	Owner string
	// Lease is how long claimed rows stay ours (default 30 s).
	Lease   time.Duration
	Claim   ClaimFunc[T]
	Release ReleaseFunc
	// ID is a row's key, as Release takes it.
	ID func(T) string
	// With, when set, gives the keys of the rows an item carries along in
	// memory (leased with it, handled after it): a release of the item
	// releases them too.
	With func(T) []string
	// Until is when the lease of an item handed over in memory ends (its
	// row's due time). An item still waiting in memory when it ends is
	// dropped there rather than handled: its row is due in the table, and
	// a claim (this node's or another's) takes it. nil: items never
	// outlive their lease in memory.
	Until func(T) time.Time
	// Batch is the most rows claimed at once, and the most items taken
	// from memory at once (default 256).
	Batch int
	// Chunk is the most items one Handler call gets (default Batch; 1
	// handles every item on its own).
	Chunk int
	// Workers bounds the Handler calls running at once (default 1).
	Workers int
	// Room bounds the items waiting in memory (default 16384).
	Room int
	// Poll is how often the table is looked at however busy the queue is
	// in memory: retries, scheduled rows and a dead node's lapsed leases
	// wait there (default 1 s).
	Poll time.Duration
	// Now is the clock of claims and releases (default time.Now).
	Now func() time.Time
	// NewTicker makes the poll's ticker (default a time.Ticker).
	NewTicker func(d time.Duration) Ticker
	Log       *slog.Logger
}

// Queue is one table's lease queue on this node. Hand gives it items
// written already leased to it; Run claims due rows, hands both to a
// Handler, and at its end releases what it did not start.
type Queue[T any] struct {
	c        Config[T]
	minClaim int           // free workers a claim waits for
	slots    chan struct{} // one per running Handler call
	wake     chan struct{} // rows may be due in the table
	ready    chan struct{} // items were handed over, or a worker came free

	mu      sync.Mutex
	mem     fifo[T] // items leased to us at insert, waiting to be handled
	stopped bool    // Run has ended: Hand takes nothing
	// starved: the loop sleeps with work that waits for a worker to come
	// free (items in memory, or a claim), so a worker that ends its call
	// must wake it; otherwise ending a call wakes no one.
	starved bool
	// handed and taken count the items ever kept in and taken from mem;
	// marks tells when each Hand still in mem came (its items end at
	// upto), so the wait of the oldest is known without a time per item.
	handed, taken int64
	marks         fifo[handMark]
	moved         chan struct{} // closed when items leave mem, then replaced
}

// handMark is one Hand's items in memory: those numbered below upto that
// the previous mark does not cover, handed over at at.
type handMark struct {
	upto int64
	at   time.Time
}

// New builds a Queue; Run starts it.
func New[T any](c Config[T]) *Queue[T] {
	if c.Lease <= 0 {
		c.Lease = 30 * time.Second
	}
	if c.Batch <= 0 {
		c.Batch = 256
	}
	if c.Chunk <= 0 || c.Chunk > c.Batch {
		c.Chunk = c.Batch
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	if c.Room <= 0 {
		c.Room = 1 << 14
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.NewTicker == nil {
		c.NewTicker = newTimeTicker
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return &Queue[T]{c: c, minClaim: max(1, c.Workers/4), slots: make(chan struct{}, c.Workers),
		wake: make(chan struct{}, 1), ready: make(chan struct{}, 1), moved: make(chan struct{})}
}

// Chunk is the most items one Handler call gets.
func (q *Queue[T]) Chunk() int { return q.c.Chunk }

// Workers is the most Handler calls that run at once.
func (q *Queue[T]) Workers() int { return q.c.Workers }

// Backlog tells how many items wait in memory and how long the oldest of
// them has waited since it was handed over, and gives a channel closed as
// soon as items leave memory (taken by a worker, dropped as lapsed, or
// released when Run ends), when both may have changed.
func (q *Queue[T]) Backlog() (n int, oldest time.Duration, moved <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = q.mem.len()
	if n > 0 && q.marks.len() > 0 {
		oldest = q.c.Now().Sub(q.marks.buf[q.marks.head].at)
	}
	return n, oldest, q.moved
}

// tookLocked counts n items taken from mem, forgets the marks they
// emptied and wakes whoever waits on Backlog. q.mu is held.
func (q *Queue[T]) tookLocked(n int) {
	if n == 0 {
		return
	}
	q.taken += int64(n)
	for q.marks.len() > 0 && q.marks.buf[q.marks.head].upto <= q.taken {
		q.marks.drop(1)
	}
	close(q.moved)
	q.moved = make(chan struct{})
}

// Owner is the name rows are leased to.
func (q *Queue[T]) Owner() string { return q.c.Owner }

// Lease is how long a lease lasts; rows written for Hand are leased until
// their write time plus Lease.
func (q *Queue[T]) Lease() time.Duration { return q.c.Lease }

// Wake tells the queue that rows became due in the table.
func (q *Queue[T]) Wake() { signal(q.wake) }

// Hand gives the queue items written already leased to its Owner (for
// Lease), so they are handled without a claim. What does not fit in
// memory, or comes after Run ended, is released to the table at once and
// the queue woken to claim it, rather than left until the lease ends. It
// returns how many items it kept in memory.
func (q *Queue[T]) Hand(ctx context.Context, items []T) int {
	if len(items) == 0 {
		return 0
	}
	q.mu.Lock()
	n := 0
	if !q.stopped {
		n = min(len(items), q.c.Room-q.mem.len())
		q.mem.push(items[:n])
		if n > 0 {
			q.handed += int64(n)
			q.marks.buf = append(q.marks.buf, handMark{upto: q.handed, at: q.c.Now()})
		}
	}
	q.mu.Unlock()
	signal(q.ready)
	if n == len(items) {
		return n
	}
	if err := q.release(context.WithoutCancel(ctx), items[n:]); err != nil {
		q.c.Log.Warn("release "+q.c.Name+" that did not fit in memory; they come due when their lease ends",
			"err", err, "rows", len(items)-n)
		return n
	}
	q.Wake()
	return n
}

// ClaimOnce claims one batch and handles it before returning; it returns
// how many rows it claimed. It is for callers that drive the queue
// themselves (tests, tools); Run does this on its own.
func (q *Queue[T]) ClaimOnce(ctx context.Context, h Handler[T]) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	items, err := q.c.Claim(ctx, q.c.Owner, q.c.Now(), q.c.Lease, q.c.Batch)
	if err != nil || len(items) == 0 {
		return 0, err
	}
	return len(items), h(context.WithoutCancel(ctx), items)
}

// Run handles items until ctx ends: those handed over in memory, and due
// rows it claims when woken, at start, and on every poll. Then it waits
// for the Handler calls running, stops taking items, and releases to the
// table those still waiting in memory, so another node need not wait for
// their lease to end.
func (q *Queue[T]) Run(ctx context.Context, h Handler[T]) {
	r := &run[T]{q: q, ctx: ctx, h: h, idle: make(chan []T)}
	r.loop()
	close(r.idle) // only loop hands chunks over; idle workers end
	r.running.Wait()
	q.mu.Lock()
	q.stopped = true
	left := q.mem.take(q.mem.len())
	q.tookLocked(len(left)) // wakes whoever waits on what was left
	q.mu.Unlock()
	if len(left) == 0 {
		return
	}
	rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := q.release(rctx, left); err != nil {
		q.c.Log.Warn("release "+q.c.Name+" still queued at stop; they come due when their lease ends", "err", err, "rows", len(left))
	}
}

func (q *Queue[T]) release(ctx context.Context, items []T) error {
	ids := make([]string, 0, len(items))
	for _, it := range items {
		ids = append(ids, q.c.ID(it))
		if q.c.With != nil {
			ids = append(ids, q.c.With(it)...)
		}
	}
	return q.c.Release(ctx, q.c.Owner, ids, q.c.Now())
}

// run is one Run of a queue.
type run[T any] struct {
	q       *Queue[T]
	ctx     context.Context
	h       Handler[T]
	running sync.WaitGroup // Handler calls
	idle    chan []T       // a worker goroutine between chunks takes the next here
}

// workerLinger is how long a worker goroutine waits for its next chunk
// before it ends. Reusing it saves more than the goroutine: a new one
// grows its stack again through the Handler's deep calls (an HTTP post,
// the database driver), which cost about as much as a short Handler call.
const workerLinger = time.Second

// loop is the queue's one scheduling goroutine: it claims and takes from
// memory, and starts Handler calls while workers are free. When both the
// table and memory have work they take turns, so a steady stream in
// memory cannot keep the table waiting, nor a backlog in the table keep
// what was handed over waiting out its lease.
func (r *run[T]) loop() {
	q := r.q
	// A ticker, not a timer reset on every turn: items handed over in
	// memory can keep the loop from ever sleeping a whole poll.
	tick := q.c.NewTicker(q.c.Poll)
	defer tick.Stop()
	claimDB := true // at start: whatever is due in the table
	tableTurn := true
	for r.ctx.Err() == nil {
		select {
		case <-q.wake:
			claimDB = true
		case <-tick.C():
			claimDB = true
		default:
		}
		busy := false
		if tableTurn && r.canClaim(claimDB) {
			n, limit := r.claim()
			claimDB = n > 0 && n == limit // a full batch: more may be due
			tableTurn, busy = false, true
		}
		keep := 0
		if tableTurn {
			keep = r.held(claimDB)
		}
		if r.takeMemory(r.free()-keep) > 0 {
			busy = true
		}
		tableTurn = true
		if busy || !r.sleep(claimDB) {
			continue
		}
		select {
		case <-r.ctx.Done():
		case <-q.wake:
			claimDB = true
		case <-tick.C():
			claimDB = true
		case <-q.ready:
		}
	}
}

func (r *run[T]) free() int { return cap(r.q.slots) - len(r.q.slots) }

// canClaim tells whether a claim that is due (claimDB) has the free
// workers it waits for.
func (r *run[T]) canClaim(claimDB bool) bool { return claimDB && r.free() >= r.q.minClaim }

// held is how many free workers memory leaves to a claim that is due and
// whose turn it is.
func (r *run[T]) held(claimDB bool) int {
	if claimDB {
		return r.q.minClaim
	}
	return 0
}

// sleep decides, before the loop sleeps, whether a worker ending its call
// must wake it: only when work waits for a free worker, in memory or in
// the table (claim). Otherwise every call's end, one per webhook, would
// wake the loop for nothing. It reports false when a worker came free
// since the loop looked, so the loop looks again instead of sleeping. A
// worker frees its slot before it reads starved, and the loop sets
// starved before it counts the free slots, both under mu: either the
// worker sees starved, or the loop sees the slot.
func (r *run[T]) sleep(claimDB bool) bool {
	q := r.q
	q.mu.Lock()
	defer q.mu.Unlock()
	q.starved = q.mem.len() > 0 || claimDB
	// What loop would start now, by its own rules (the table's turn
	// comes first after a sleep).
	take := q.mem.len() > 0 && r.free() > r.held(claimDB)
	return !r.canClaim(claimDB) && !take
}

// woke tells the loop a worker came free, if it waits for one.
func (r *run[T]) woke() {
	q := r.q
	q.mu.Lock()
	starved := q.starved
	q.mu.Unlock()
	if starved {
		signal(q.ready)
	}
}

// claim claims what the free workers can take and starts them on it. It
// returns how many rows came and how many it asked for.
func (r *run[T]) claim() (n, limit int) {
	q := r.q
	limit = min(r.free()*q.c.Chunk, q.c.Batch)
	items, err := q.c.Claim(r.ctx, q.c.Owner, q.c.Now(), q.c.Lease, limit)
	if err != nil && r.ctx.Err() == nil {
		q.c.Log.Error("claim "+q.c.Name, "err", err)
	}
	r.start(items)
	return len(items), limit
}

// takeMemory starts up to workers free workers on items waiting in memory
// and returns how many items it took.
func (r *run[T]) takeMemory(workers int) int {
	if workers <= 0 {
		return 0
	}
	q := r.q
	q.mu.Lock()
	items := q.mem.take(min(workers*q.c.Chunk, q.c.Batch))
	q.tookLocked(len(items))
	q.starved = false // the loop is awake, and says so again before it sleeps
	q.mu.Unlock()
	taken := len(items)
	if lapsed := r.dropLapsed(&items); lapsed > 0 {
		q.c.Log.Warn(q.c.Name+" waited in memory past their lease; left to the table's claim", "rows", lapsed)
		signal(q.wake)
	}
	r.start(items)
	return taken
}

// dropLapsed removes from items those whose lease has ended: their rows
// are due in the table, where a claim may already have taken them, so
// handling them from memory too would handle them twice. It returns how
// many it dropped.
func (r *run[T]) dropLapsed(items *[]T) int {
	q := r.q
	if q.c.Until == nil || len(*items) == 0 {
		return 0
	}
	now := q.c.Now()
	kept := (*items)[:0]
	for _, it := range *items {
		if q.c.Until(it).After(now) {
			kept = append(kept, it)
		}
	}
	n := len(*items) - len(kept)
	clear((*items)[len(kept):])
	*items = kept
	return n
}

// start runs the Handler on items, a chunk per worker. The caller made
// sure enough workers are free.
func (r *run[T]) start(items []T) {
	q := r.q
	work := context.WithoutCancel(r.ctx)
	for len(items) > 0 {
		chunk := items[:min(q.c.Chunk, len(items))]
		items = items[len(chunk):]
		q.slots <- struct{}{}
		r.running.Add(1)
		select {
		case r.idle <- chunk:
		default:
			go r.work(work, chunk)
		}
	}
}

// work handles chunks, the first it was started with and then those
// handed to it while it waits idle, until none comes for workerLinger or
// the run ends.
func (r *run[T]) work(ctx context.Context, chunk []T) {
	q := r.q
	linger := time.NewTimer(workerLinger)
	defer linger.Stop()
	for {
		if err := r.h(ctx, chunk); err != nil && r.ctx.Err() == nil {
			q.c.Log.Error("handle "+q.c.Name, "err", err)
		}
		<-q.slots
		r.running.Done()
		r.woke()
		linger.Reset(workerLinger)
		var ok bool
		select {
		case chunk, ok = <-r.idle:
			if !ok {
				return
			}
		case <-linger.C:
			return
		}
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// fifo is the in-memory queue: a slice read from the front.
type fifo[T any] struct {
	buf  []T
	head int
}

func (f *fifo[T]) len() int { return len(f.buf) - f.head }

func (f *fifo[T]) push(items []T) { f.buf = append(f.buf, items...) }

// take removes and returns up to n items from the front, in a slice of
// their own (the handler keeps it while the buffer is reused).
func (f *fifo[T]) take(n int) []T {
	n = min(n, f.len())
	if n <= 0 {
		return nil
	}
	out := make([]T, n)
	copy(out, f.buf[f.head:f.head+n])
	f.drop(n)
	return out
}

// drop removes n items from the front (n at most len).
func (f *fifo[T]) drop(n int) {
	clear(f.buf[f.head : f.head+n]) // let what the items hold be collected once handled
	f.head += n
	switch {
	case f.head == len(f.buf):
		f.buf, f.head = f.buf[:0], 0
	case f.head > len(f.buf)/2:
		m := copy(f.buf, f.buf[f.head:])
		clear(f.buf[m:])
		f.buf, f.head = f.buf[:m], 0
	}
}

type timeTicker struct{ t *time.Ticker }

func newTimeTicker(d time.Duration) Ticker { return timeTicker{time.NewTicker(d)} }
func (t timeTicker) C() <-chan time.Time   { return t.t.C }
func (t timeTicker) Stop()                 { t.t.Stop() }
