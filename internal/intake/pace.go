package intake

import (
	"context"
	"time"
)

// Backlog is this node's dispatcher queue as a send sees it
// (lease.Queue): how many messages wait in memory for a worker, how long
// the oldest has waited, and a channel closed when messages leave it.
type Backlog interface {
	Backlog() (n int, oldest time.Duration, moved <-chan struct{})
}

// Pace holds back a send whose messages are due now while this node's
// dispatcher is behind, so that the node accepts no faster than it hands
// messages over. Without it a node that takes sends faster than its
// providers (or its own CPU) pass them on keeps accepting, and what it
// accepted waits in the queue longer and longer: at 128 clients on two
// cores, 5 to 6 seconds before the hand-over by the end of a 30,000
// message run. Held back, the sender waits for its answer instead, and
// what the node accepted waits behind no more than about Behind or a
// chunk of earlier messages, whichever is longer.
type Pace struct {
	// Backlog is the queue waited on; nil never waits.
	Backlog Backlog
	// Behind is how long the oldest waiting message may have waited
	// before sends wait (0 never waits).
	Behind time.Duration
	// Floor is the fewest messages waiting at which sends wait (a
	// worker's whole chunk): below it a worker that comes free would find
	// less than a chunk, and holding sends back would starve it rather
	// than let it catch up.
	Floor int
	// Max bounds one send's wait. A dispatcher that does not move (its
	// provider hangs until its timeouts) slows every send by at most
	// this, and the send is then accepted as it would have been.
	Max time.Duration
	// Waited, when set, is told of each send that waited and for how long.
	Waited func(d time.Duration)
	// Now is the clock the wait is measured with (default time.Now).
	Now func() time.Time
}

// wait returns once the dispatcher has caught up, Max has passed, or ctx
// has ended: a send is never refused for the backlog, only answered later.
func (p *Pace) wait(ctx context.Context) {
	if p == nil || p.Backlog == nil || p.Behind <= 0 {
		return
	}
	n, oldest, moved := p.Backlog.Backlog()
	if n < p.Floor || oldest <= p.Behind {
		return
	}
	now := p.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	limit := time.NewTimer(p.Max)
	defer limit.Stop()
	defer func() {
		if p.Waited != nil {
			p.Waited(now().Sub(start))
		}
	}()
	for {
		select {
		case <-moved:
		case <-limit.C:
			return
		case <-ctx.Done():
			return
		}
		if n, oldest, moved = p.Backlog.Backlog(); n < p.Floor || oldest <= p.Behind {
			return
		}
	}
}
