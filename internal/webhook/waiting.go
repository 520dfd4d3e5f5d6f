package webhook

import (
	"sync"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// Waiting tells the worker when to look in the events table after
// recording outcomes. An event written while an earlier event of its
// message is pending waits there (see ClaimEvents), and a claim can take
// it only once that event's outcome is recorded; looking after every
// outcome found nothing in more than nine claims of ten, each a statement
// in the writer's transaction. A node that alone writes and claims the
// events (SQLite) knows every such event as it is written, and every event
// it claimed (behind which one may wait unknown, after a restart or a
// retry): Waiting remembers their messages, and the worker looks in the
// table when an outcome is of one of them. Nodes that share the table
// (PostgreSQL) cannot know what the others wrote: they have none, and look
// after every outcome.
type Waiting struct {
	mu   sync.Mutex
	msgs map[string]struct{}
	// lost is set when msgs was cleared for room: the next outcomes look
	// in the table, and what was forgotten waits at most for the poll.
	lost bool
}

// waitingRoom bounds the messages remembered. A message is forgotten once
// an outcome of its events is recorded; only a node that keeps failing to
// record outcomes could fill it.
const waitingRoom = 1 << 16

// NewWaiting makes an empty Waiting.
func NewWaiting() *Waiting { return &Waiting{msgs: map[string]struct{}{}} }

// Note remembers the messages of evs: events written to wait in the table,
// or claimed from it. Nil does nothing.
func (w *Waiting) Note(evs []domain.Event) {
	if w == nil || len(evs) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range evs {
		m := evs[i].MessageID
		if m == "" {
			continue // not in a message's order: never waits behind another
		}
		if len(w.msgs) >= waitingRoom {
			clear(w.msgs)
			w.lost = true
		}
		w.msgs[m] = struct{}{}
	}
}

// settled reports whether recording outcomes of the events of msgs may
// have let events waiting in the table go, and forgets those messages: an
// event of theirs still waiting is noted again when a claim takes the one
// before it. Nil always reports true.
func (w *Waiting) settled(msgs []string) bool {
	if w == nil {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	found := w.lost
	w.lost = false
	for _, m := range msgs {
		if _, ok := w.msgs[m]; ok {
			delete(w.msgs, m)
			found = true
		}
	}
	return found
}
