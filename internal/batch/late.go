package batch

import (
	"context"
	"errors"
	"sync"
	"time"
)

// LateFunc processes a group that it takes itself: take returns the
// group's items, gathered at its first call; later calls return the same
// items, so a function run again (a transaction tried again) sees the
// same group. It returns one result per item, in order, or an error for
// the whole group. It must call take unless it fails first.
type LateFunc[T, R any] func(ctx context.Context, take func() []T) ([]R, error)

// errNotTaken: a LateFunc returned without taking its group.
var errNotTaken = errors.New("batch: the group was never taken")

// NewLate starts a batcher that gathers each group as late as it can. A
// group opens with its first item and hands fn to run at once, but what
// else queued joins it only when fn calls take: when a group of writes
// waits behind a running transaction, everything that arrives meanwhile
// is in it, rather than in a next group that waits for this one's
// commit. The next group opens once this one is taken, so a new group
// can be waiting while others run; at most depth groups are open or
// running at a time.
//
// In front of one writer that runs groups one at a time (SQLite) this
// keeps a group ready for each of its transactions: two groups of a
// level whose loop waited for each commit never met in one transaction,
// and the time between a commit and the next group's arrival was lost.
// In front of writers that run in parallel (PostgreSQL) each open group
// would be taken at once, small; New's loops suit them better.
func NewLate[T, R any](fn LateFunc[T, R], max, depth int, opts ...Option) *Batcher[T, R] {
	o := newOptions(opts)
	if depth < 2 {
		depth = 2 // one group running, one gathering
	}
	b := &Batcher[T, R]{max: max, in: make(chan call[T, R], max*depth), quit: make(chan struct{}), ended: make(chan struct{}),
		now: o.now, after: o.after, hold: o.hold}
	go func() {
		b.lateLoop(fn, depth)
		close(b.ended)
	}()
	return b
}

// lateGroup is one group of a late batcher, from its first item to its
// answers.
type lateGroup[T, R any] struct {
	first   call[T, R]
	opened  time.Time
	once    sync.Once
	calls   []call[T, R]
	items   []T
	queued  time.Duration
	takenAt time.Time
	taken   chan struct{} // closed once the group is gathered
}

func (b *Batcher[T, R]) lateLoop(fn LateFunc[T, R], depth int) {
	ctx := context.WithValue(context.Background(), workerKey{}, 0)
	if b.hold > 0 {
		ctx = Patient(ctx) // its groups wait for company already
	}
	slots := make(chan struct{}, depth)
	var running sync.WaitGroup
	defer running.Wait() // the groups under way run to completion
	for {
		waiting := b.now()
		select {
		case slots <- struct{}{}:
		case <-b.quit:
			return
		}
		var first call[T, R]
		select {
		case first = <-b.in:
		case <-b.quit:
			return
		}
		g := &lateGroup[T, R]{first: first, opened: b.now(), taken: make(chan struct{})}
		b.stats.idle.Add(int64(g.opened.Sub(waiting)))
		hold := b.hold > 0 && b.open.Load() > 0
		b.open.Add(1)
		running.Add(1)
		go func() {
			defer running.Done()
			if hold {
				select {
				case <-b.after(b.hold):
				case <-b.quit: // closing: the group runs now
				}
			}
			b.runLate(ctx, fn, g)
			b.open.Add(-1)
			<-slots
		}()
		// The next group opens once this one has its items: opened
		// earlier, it would take items this one is about to gather.
		<-g.taken
	}
}

// take gathers the group: its first item and whatever queued since, up
// to max, once.
func (b *Batcher[T, R]) take(g *lateGroup[T, R]) []T {
	g.once.Do(func() {
		// Room for what is queued now, not for max: a group's calls are
		// large (the items themselves), and most groups are far from full.
		g.calls = b.drain(b.in, append(make([]call[T, R], 0, min(b.max, len(b.in)+1)), g.first))
		g.takenAt = b.now()
		g.items = make([]T, len(g.calls))
		for i, c := range g.calls {
			g.items[i] = c.item
			g.queued += g.takenAt.Sub(c.at)
		}
		close(g.taken)
	})
	return g.items
}

func (b *Batcher[T, R]) runLate(ctx context.Context, fn LateFunc[T, R], g *lateGroup[T, R]) {
	taken := false
	results, err := fn(ctx, func() []T { taken = true; return b.take(g) })
	if !taken && err == nil {
		err = errNotTaken
	}
	b.take(g) // a function that failed before taking fails its whole group
	ran := b.now()
	if err == nil && len(results) != len(g.calls) {
		err = errors.New("batch: a result count that does not match the group")
	}
	answer(g.calls, results, err)
	b.stats.add(len(g.calls), g.queued, 0, g.takenAt.Sub(g.opened), ran.Sub(g.takenAt), b.now().Sub(ran))
}
