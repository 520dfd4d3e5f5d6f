package dispatch

import (
	"context"
	"sync"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// hold is the lease a dispatch holds on the messages of its batch that it
// has not recorded yet. A batch may take longer than its lease (a slow or
// absent provider, chunk after chunk): a heartbeat renews the lease while
// the batch is under way, and a chunk is handed over only while its
// messages' lease still runs, so that no claim (this node's poll or
// another node's) takes them meanwhile and sends them a second time.
type hold struct {
	d *Dispatcher
	// renewing makes renewals one at a time: two at once would send the
	// same lease end, and the later one, finding it moved by the
	// earlier, would take the messages for lost.
	renewing sync.Mutex

	mu        sync.Mutex
	until     map[string]time.Time // message id → end of our lease on it, as last written
	recording map[string]bool      // handed over, outcome being recorded: a failed renewal is expected
}

// holdBatch starts holding the messages of a sorted batch that are to be
// handed over, whose NextAttemptAt is the end of the lease they were
// claimed or written with. (Those that ended without a hand-over are
// recorded at once; those that could not be routed wait for their lease
// to lapse.)
func (d *Dispatcher) holdBatch(b sorted) *hold {
	h := &hold{d: d, until: map[string]time.Time{}, recording: map[string]bool{}}
	for _, ms := range b.groups {
		for _, m := range ms {
			h.until[m.ID] = m.NextAttemptAt
		}
	}
	for _, it := range b.rich {
		h.until[it.m.ID] = it.m.NextAttemptAt
	}
	return h
}

// heartbeat renews the lease every quarter of it until stop is called, so
// that what waits behind a slow chunk stays leased to us. It is a timer,
// not a goroutine: most batches end long before the first renewal, and a
// goroutine a batch cost its start and two wake-ups (stop's and its end's)
// for nothing.
func (h *hold) heartbeat(ctx context.Context) (stop func()) {
	every := max(h.d.lease/4, time.Millisecond)
	// mu is held through each beat, so stop, which takes it, waits for a
	// renewal under way and leaves none to come.
	var mu sync.Mutex
	stopped := false
	var t *time.Timer
	beat := func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		h.renew(ctx)
		t.Reset(every)
	}
	mu.Lock()
	t = time.AfterFunc(every, beat)
	mu.Unlock()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		t.Stop()
	}
}

// renew extends the lease on every message still held; those the store
// no longer holds for us (a claim took them after our lease lapsed) are
// dropped.
func (h *hold) renew(ctx context.Context) {
	h.renewing.Lock()
	defer h.renewing.Unlock()
	h.mu.Lock()
	held := make(map[string]time.Time, len(h.until))
	for id, u := range h.until {
		held[id] = u
	}
	h.mu.Unlock()
	if len(held) == 0 {
		return
	}
	now := h.d.now().UTC()
	ids, err := h.d.store.RenewMessages(ctx, h.d.owner, held, now, h.d.lease)
	if err != nil {
		// Keep what we know: the check before each chunk asks again.
		h.d.log.Warn("renew the lease of messages being handed over", "err", err, "messages", len(held))
		return
	}
	renewed := make(map[string]bool, len(ids))
	for _, id := range ids {
		renewed[id] = true
	}
	until := now.Add(h.d.lease)
	h.mu.Lock()
	defer h.mu.Unlock()
	lost := 0
	for id := range held {
		if _, ok := h.until[id]; !ok {
			continue // recorded meanwhile
		}
		switch {
		case renewed[id]:
			h.until[id] = until
		case h.recording[id]:
			delete(h.until, id) // its outcome is recorded: no longer leased
		default:
			delete(h.until, id)
			lost++
		}
	}
	if lost > 0 {
		h.d.log.Warn("messages no longer leased to this dispatch (claimed again after their lease lapsed, or changed meanwhile); not handed over here",
			"messages", lost)
	}
}

// ready returns the messages of chunk that may be handed over now: those
// whose lease outlasts a hand-over (its timeout, half the lease) with room
// to record the outcome. When one of them falls short the lease is
// renewed first, and then what outlasts the hand-over goes (the renewal
// itself took some of the room); what the store no longer holds for us is
// left out.
func (h *hold) ready(ctx context.Context, chunk []domain.Message) []domain.Message {
	need := h.d.now().Add(h.d.lease/2 + h.d.lease/8)
	if !h.lasts(chunk) {
		h.renew(ctx)
		need = h.d.now().Add(h.d.lease / 2)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// Usually every message still qualifies, and the chunk goes as it is:
	// a message is some 800 bytes, and copying each was 4 % of what a node
	// allocated a message at C=8. Only a chunk that loses some is
	// copied, into a slice of its own, leaving the batch as it was.
	for i, m := range chunk {
		if h.until[m.ID].After(need) {
			continue
		}
		out := append(make([]domain.Message, 0, len(chunk)-1), chunk[:i]...)
		for _, m := range chunk[i+1:] {
			if h.until[m.ID].After(need) {
				out = append(out, m)
			}
		}
		return out
	}
	return chunk
}

// lasts reports whether the lease on every message of chunk outlasts a
// hand-over and its recording.
func (h *hold) lasts(chunk []domain.Message) bool {
	need := h.d.now().Add(h.d.lease/2 + h.d.lease/8)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range chunk {
		if !h.until[m.ID].After(need) {
			return false
		}
	}
	return true
}

// handed marks messages handed over whose outcome is being recorded: the
// lease still guards them until it is, but the record ends it.
func (h *hold) handed(msgs []domain.Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range msgs {
		h.recording[m.ID] = true
	}
}

// done stops holding messages whose outcome is recorded.
func (h *hold) done(msgs []domain.Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range msgs {
		delete(h.until, m.ID)
		delete(h.recording, m.ID)
	}
}
