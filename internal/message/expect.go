package message

import (
	"context"
	"sync"
	"time"
)

// expectHold bounds how long a receipt waits for the record of the
// hand-over its provider announced. The record normally follows within
// milliseconds (the dispatcher writes a chunk's outcome as soon as the
// provider answered all of it); when it does not come (a multipart message
// whose later part was refused never becomes Accepted), the receipt goes
// the slow way: parked in storage until its reference is known.
const expectHold = 5 * time.Second

// expectations are the provider references announced by providers (their
// answer to a submission) whose hand-over the dispatcher has not yet
// recorded. A receipt naming one of them waits for that record instead of
// being parked: parking costs a row written and deleted per receipt, and a
// fast SMSC answers most receipts before the record of its own submission.
//
// Only this node's dispatcher records what this node's providers announce,
// so memory suffices; a receipt that reaches another node, or one whose
// announcement is lost to a restart, is parked as before.
type expectations struct {
	hold time.Duration // expectHold unless set (tests)

	mu      sync.Mutex
	refs    map[expectKey]*expectation
	queue   []expectKey // in announcement order, to drop the stale
	waiting int         // receipts waiting now
}

func (e *expectations) holdFor() time.Duration {
	if e.hold > 0 {
		return e.hold
	}
	return expectHold
}

type expectKey struct{ provider, ref string }

type expectation struct {
	done chan struct{} // closed once the hand-over is recorded (or given up)
	at   time.Time
}

// expect notes an announced reference.
func (e *expectations) expect(provider, ref string, now time.Time) {
	k := expectKey{provider, ref}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.refs == nil {
		e.refs = map[expectKey]*expectation{}
	}
	e.dropStale(now)
	if _, ok := e.refs[k]; ok {
		return
	}
	e.refs[k] = &expectation{done: make(chan struct{}), at: now}
	e.queue = append(e.queue, k)
}

// dropStale forgets announcements older than the hold whose record never
// came: whoever waits on them has stopped waiting by now. The caller holds
// e.mu.
func (e *expectations) dropStale(now time.Time) {
	n := 0
	for _, k := range e.queue {
		x, ok := e.refs[k]
		if !ok {
			n++ // recorded meanwhile
			continue
		}
		if now.Sub(x.at) < e.holdFor() {
			break
		}
		close(x.done)
		delete(e.refs, k)
		n++
	}
	e.queue = e.queue[n:]
	if len(e.queue) == 0 {
		e.queue = nil // let the backing array go
	}
}

// recorded ends the wait for the references of these reports' hand-overs:
// their transaction has ended (committed, or failed, in which case the
// receipt takes the slow way).
func (e *expectations) recorded(reports []Report) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.refs) == 0 {
		return
	}
	for _, r := range reports {
		if r.Kind != Accepted {
			continue
		}
		e.settle(expectKey{r.Provider, r.Ref})
		for _, ref := range r.Parts {
			e.settle(expectKey{r.Provider, ref})
		}
	}
}

// settle closes one expectation. The caller holds e.mu.
func (e *expectations) settle(k expectKey) {
	if x, ok := e.refs[k]; ok {
		close(x.done)
		delete(e.refs, k)
	}
}

// wait returns once no report that names only a provider's reference still
// waits for its announced hand-over to be recorded, ctx ends, or the hold
// has passed.
func (e *expectations) wait(ctx context.Context, reports []Report) {
	var pending []chan struct{}
	e.mu.Lock()
	for _, r := range reports {
		if r.MessageID != "" || r.Ref == "" {
			continue
		}
		if x, ok := e.refs[expectKey{r.Provider, r.Ref}]; ok {
			pending = append(pending, x.done)
		}
	}
	if len(pending) > 0 {
		e.waiting++
	}
	e.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	defer func() {
		e.mu.Lock()
		e.waiting--
		e.mu.Unlock()
	}()
	timer := time.NewTimer(e.holdFor())
	defer timer.Stop()
	for _, done := range pending {
		select {
		case <-done:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// state tells how many references are expected and how many receipts wait.
func (e *expectations) state() (expected, waiting int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.refs), e.waiting
}
