package tracking

import (
	"context"
	"slices"
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

// expectWait bounds how long the record of a hand-over waits for the
// receipts of the references it announced (see await). A simulator or a
// carrier's test SMSC answers within a millisecond; a real carrier's
// receipts come seconds later, and for those the record does not wait.
const expectWait = 2 * time.Millisecond

// maxRiding bounds the receipts that wait at once for the record of
// their hand-over; past it a receipt is applied at once (and parked until
// its reference is recorded). A waiting receipt holds its connection's
// handler, and a record can come only once the provider has answered the
// whole chunk, which it does on the same connection: an SMPP bind stops
// reading its socket while all its 256 deliver_sm handlers are busy, so
// with as many receipts waiting, the answers they wait for could not be
// read until the hold ran out (with a window of 50, chunks of 200 stalled
// for 5 s). Half of a bind's handlers keeps the other half for receipts
// that do not wait.
const maxRiding = 128

// A provider's trust goes up by one for each wait a receipt came in, and
// down by paceMiss for each that none did; the record waits while it is
// above zero. At zero, one record in paceProbe waits anyway, so that a
// provider whose receipts became fast is found out again.
const (
	paceTrust = 4
	paceMiss  = 2
	paceProbe = 64
)

// expectations are the provider references announced by providers (their
// answer to a submission) whose hand-over the dispatcher has not yet
// recorded. A fast SMSC answers most receipts before the record of its own
// submission; such a receipt used to be parked (a row written and deleted)
// and applied in a second transaction after the record. Now it rides with
// the record: it joins the dispatcher's report of the hand-over, and both
// are applied in one transaction, the message written once with its final
// state. A receipt that comes once the record is under way waits for it
// and is applied right after, without being parked.
//
// Only this node's dispatcher records what this node's providers announce,
// so memory suffices; a receipt that reaches another node, or one whose
// announcement is lost to a restart, is parked as before.
type expectations struct {
	hold time.Duration // expectHold unless set (tests)
	wait time.Duration // expectWait unless set; negative: never wait
	// maxRiding is the package's maxRiding unless set (tests).
	maxRiding int

	mu      sync.Mutex
	refs    map[expectKey]*expectation
	queue   []expectKey // in announcement order, to drop the stale
	waiting int         // receipts waiting now
	carried int         // records that took riders, since the start
	paces   map[string]*pace
	// Since the start: receipts that waited to ride and were applied on
	// their own when no record took them (the hold ran out, or the
	// record never came), and receipts that did not ride because
	// maxRiding waited already.
	leftBehind, overflowed int
}

// pace is what waiting for a provider's receipts has paid lately.
type pace struct {
	trust   int // 0..paceTrust; the record waits while above zero
	skipped int // records that did not wait since trust fell to zero
}

func (e *expectations) holdFor() time.Duration {
	if e.hold > 0 {
		return e.hold
	}
	return expectHold
}

func (e *expectations) ridingMax() int {
	if e.maxRiding > 0 {
		return e.maxRiding
	}
	return maxRiding
}

func (e *expectations) waitFor() time.Duration {
	if e.wait != 0 {
		return e.wait
	}
	return expectWait
}

type expectKey struct{ provider, ref string }

// rider is a receipt riding on a hand-over's record, and the call
// (deliver) that waits for it.
type rider struct {
	call *int
	r    Report
}

type expectation struct {
	done chan struct{} // closed once the hand-over's record ended (or was given up)
	at   time.Time
	// riders are receipts waiting to be applied with the record, with the
	// call each came from; taken once the record's transaction has them.
	riders []rider
	taken  bool
	err    error // when done and taken: the outcome of the record the riders went with
	// rode, made by a record that waits for a rider (await), is closed
	// by the first rider.
	rode chan struct{}
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
// came: their riders' callers have stopped waiting and apply them
// themselves. The caller holds e.mu.
func (e *expectations) dropStale(now time.Time) {
	n := 0
	for _, k := range e.queue {
		x, ok := e.refs[k]
		if !ok {
			n++ // recorded meanwhile
			continue
		}
		if now.Sub(x.at) < e.holdFor() || x.taken {
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

// await lets the record of these reports wait, at most the wait, for the
// receipts of the references its hand-overs announced, so that they ride
// with it. Behind a provider that answers its receipts right after its
// submissions, most receipts used to come while the record was under way:
// too late to ride, they waited for it and were applied in a transaction
// of their own, the message written twice and its SENT and DELIVERED
// events handed over apart. Waiting a moment puts both in one
// transaction. The wait ends as soon as every such reference has a
// receipt, and a record waits only while its provider's recent receipts
// did come within the wait (pace), so a real carrier, whose receipts come
// seconds later, costs nothing.
func (e *expectations) await(ctx context.Context, reports []Report) {
	d := e.waitFor()
	if d < 0 {
		return
	}
	rode, waited := e.awaiting(reports)
	if len(rode) == 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
wait:
	for _, c := range rode {
		select {
		case <-c:
		case <-timer.C:
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for p, xs := range waited {
		pc := e.paces[p]
		if slices.ContainsFunc(xs, func(x *expectation) bool { return len(x.riders) > 0 }) {
			pc.trust = min(pc.trust+1, paceTrust)
		} else {
			pc.trust = max(pc.trust-paceMiss, 0)
		}
		for _, x := range xs {
			x.rode = nil
		}
	}
}

// awaiting finds, of the references these reports record, those announced
// and still without a receipt, of providers whose receipts are worth
// waiting for: the channels their first receipt closes, and them by
// provider.
func (e *expectations) awaiting(reports []Report) (rode []chan struct{}, waited map[string][]*expectation) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.refs) == 0 {
		return nil, nil
	}
	for _, r := range reports {
		x := e.open(r)
		if x == nil || len(x.riders) > 0 {
			continue
		}
		if waited == nil {
			waited = map[string][]*expectation{}
		}
		waited[r.Provider] = append(waited[r.Provider], x)
	}
	for p, xs := range waited {
		if !e.worthWaiting(p) {
			delete(waited, p)
			continue
		}
		for _, x := range xs {
			if x.rode == nil {
				x.rode = make(chan struct{})
			}
			rode = append(rode, x.rode)
		}
	}
	return rode, waited
}

// worthWaiting tells whether a record waits for provider p's receipts,
// counting the records that do not. The caller holds e.mu.
func (e *expectations) worthWaiting(p string) bool {
	if e.paces == nil {
		e.paces = map[string]*pace{}
	}
	pc := e.paces[p]
	if pc == nil {
		pc = &pace{trust: 1} // a new provider is tried at once
		e.paces[p] = pc
	}
	if pc.trust > 0 {
		return true
	}
	pc.skipped++
	if pc.skipped < paceProbe {
		return false
	}
	pc.skipped = 0
	return true
}

// open is the expectation whose riders the record of r takes: r records
// the hand-over of one part under an announced reference whose riders
// are not taken yet; nil otherwise. The caller holds e.mu.
func (e *expectations) open(r Report) *expectation {
	if r.Kind != Accepted || r.Ref == "" || len(r.Parts) > 1 {
		return nil
	}
	x, ok := e.refs[expectKey{r.Provider, r.Ref}]
	if !ok || x.taken {
		return nil
	}
	return x
}

// take hands the receipts riding on these reports' hand-overs to the
// caller that records them, each naming its message and the reference it
// must find recorded (Report.Follows). Only a hand-over of one part takes
// riders: a part's receipt decides nothing alone, and its waiters apply it
// once the parts are recorded.
func (e *expectations) take(reports []Report) []Report {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.refs) == 0 {
		return nil
	}
	var out []Report
	for _, r := range reports {
		x := e.open(r)
		if x == nil {
			continue
		}
		x.taken = true
		for _, rd := range x.riders {
			rd.r.MessageID, rd.r.Follows = r.MessageID, r.Ref
			out = append(out, rd.r)
		}
	}
	return out
}

// recorded ends the wait for the references of these reports' hand-overs:
// their transaction has ended, with err. Riders it took went with it.
func (e *expectations) recorded(reports []Report, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.refs) == 0 {
		return
	}
	for _, r := range reports {
		if r.Kind != Accepted {
			continue
		}
		e.settle(expectKey{r.Provider, r.Ref}, err)
		for _, ref := range r.Parts {
			e.settle(expectKey{r.Provider, ref}, err)
		}
	}
}

// settle closes one expectation. The caller holds e.mu.
func (e *expectations) settle(k expectKey, err error) {
	if x, ok := e.refs[k]; ok {
		x.err = err
		if x.taken && len(x.riders) > 0 {
			e.carried++
		}
		close(x.done)
		delete(e.refs, k)
	}
}

// ride keeps, of reports, those naming only a provider's reference that
// was announced and whose record has not taken its riders yet, while
// fewer than maxRiding calls wait: they will be applied with it. It
// returns the rest, the expectations ridden on and those the rest must
// wait for. The rest is reports itself when none of them rides, as most
// do not: a report is a few hundred bytes, and copying every batch of
// them was an allocation per receipt.
func (e *expectations) ride(call *int, reports []Report) (rest []Report, riding, waitFor []*expectation) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rode := false // rest holds a copy of what does not ride
	full := e.waiting >= e.ridingMax()
	for i, r := range reports {
		x, ok := (*expectation)(nil), false
		if r.MessageID == "" && r.Ref != "" {
			x, ok = e.refs[expectKey{r.Provider, r.Ref}]
		}
		if ok && !x.taken && full {
			// Too many wait already: applied now. One whose record is
			// under way still waits for it; that wait needs no answer
			// from the provider.
			x, ok = nil, false
			e.overflowed++
		}
		if !ok || x.taken {
			if ok {
				waitFor = append(waitFor, x)
			}
			if rode {
				rest = append(rest, r)
			}
			continue
		}
		if !rode {
			rode = true
			rest = append(make([]Report, 0, len(reports)-1), reports[:i]...)
		}
		if x.rode != nil {
			close(x.rode)
			x.rode = nil
		}
		if !slices.Contains(riding, x) {
			riding = append(riding, x) // once, however many of these reports ride on it
		}
		x.riders = append(x.riders, rider{call, r})
	}
	if !rode {
		rest = reports
	}
	if len(riding)+len(waitFor) > 0 {
		e.waiting++
	}
	return rest, riding, waitFor
}

// alight takes back this call's riders of x while they still wait (x's
// record has not taken them): the caller applies them itself.
func (e *expectations) alight(call *int, x *expectation) []Report {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x.taken {
		return nil
	}
	var out []Report
	kept := x.riders[:0]
	for _, rd := range x.riders {
		if rd.call == call {
			out = append(out, rd.r)
		} else {
			kept = append(kept, rd)
		}
	}
	x.riders = kept
	e.leftBehind += len(out)
	return out
}

// counts tells how many receipts were left behind and how many went past
// the bound, since the start (Tracker.Riders).
func (e *expectations) counts() (leftBehind, overflowed int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leftBehind, e.overflowed
}

func (e *expectations) stopWaiting() {
	e.mu.Lock()
	e.waiting--
	e.mu.Unlock()
}

// state tells how many references are expected and how many receipts wait.
func (e *expectations) state() (expected, waiting int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.refs), e.waiting
}

// deliver applies a provider's reports: those riding on an announced
// hand-over go with its record (waiting for it), those whose hand-over's
// record is under way wait for it, and the rest are applied now. It
// returns once every report is stored.
func (e *expectations) deliver(ctx context.Context, reports []Report, apply func(context.Context, []Report) error) error {
	call := new(int) // this call's mark on its riders
	rest, riding, waitFor := e.ride(call, reports)
	if len(riding)+len(waitFor) == 0 {
		return apply(ctx, rest)
	}
	defer e.stopWaiting()
	timer := time.NewTimer(e.holdFor())
	defer timer.Stop()
	expired := false
	wait := func(x *expectation, bounded bool) error {
		if !bounded {
			select {
			case <-x.done:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		select {
		case <-x.done:
		case <-timer.C:
			expired = true
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
	for _, x := range waitFor {
		if expired {
			break
		}
		if err := wait(x, true); err != nil {
			return err
		}
	}
	var own []Report // riders no record took: applied here
	var firstErr error
	for _, x := range riding {
		if !expired {
			if err := wait(x, true); err != nil {
				return err
			}
		}
		if back := e.alight(call, x); len(back) > 0 {
			own = append(own, back...)
			continue
		}
		// Taken: its record has the riders; wait for its outcome.
		if err := wait(x, false); err != nil {
			return err
		}
		if x.err != nil && firstErr == nil {
			firstErr = x.err
		}
	}
	if firstErr != nil {
		return firstErr
	}
	return apply(ctx, append(rest, own...))
}
