package webhook

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/lease/leasetest"
)

// Waiting remembers a message from when an event of it waits in the table
// or is claimed until an outcome of it is recorded; an outcome of any
// other message lets nothing go. When full it forgets everything, and the
// next outcomes look in the table once.
func TestWaitingRemembersUntilAnOutcome(t *testing.T) {
	w := NewWaiting()
	w.Note([]domain.Event{{ID: "evt_1", MessageID: "msg_1"}, {ID: "evt_r", MessageID: ""}})
	if w.settled([]string{"msg_2", ""}) {
		t.Fatal("an outcome of another message (or of a reply) let something go")
	}
	if !w.settled([]string{"msg_2", "msg_1"}) {
		t.Fatal("an outcome of a noted message let nothing go")
	}
	if w.settled([]string{"msg_1"}) {
		t.Fatal("a message was remembered after its outcome")
	}
	for i := range waitingRoom + 1 {
		w.Note([]domain.Event{{MessageID: "msg_" + strconv.Itoa(i)}})
	}
	if !w.settled(nil) {
		t.Fatal("forgetting for room did not have the next outcomes look in the table")
	}
	if w.settled(nil) {
		t.Fatal("forgetting for room had every later outcome look in the table")
	}
	var none *Waiting // nodes sharing the table: look every time
	none.Note([]domain.Event{{MessageID: "msg_1"}})
	if !none.settled(nil) {
		t.Fatal("without a Waiting, an outcome did not look in the table")
	}
}

// With a Waiting, the worker looks in the table after recording outcomes
// only when one of them is of a message noted as having an event waiting
// there: the event due in the table is claimed after the noted message's
// outcome, not after those of the messages before it. The poll is an
// hour away, so only that wake can bring it.
func TestWorkerLooksInTheTableWhenAnOutcomeLetsAnEventGo(t *testing.T) {
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	// Closed after the worker stops (cleanups run last first): a post
	// still under way must not meet a receiver that went away.
	t.Cleanup(rcv.Close)
	st := &tableStore{recorded: map[string]bool{}}
	waiting := NewWaiting()
	w := NewWorker(WorkerConfig{Store: st, Waiting: waiting, Poll: time.Hour,
		Sender: NewSender(SenderOptions{ClientOptions: ClientOptions{AllowPrivate: true}}),
		Log:    slog.New(slog.NewTextHandler(io.Discard, nil))})
	ev := func(id, msg string) domain.Event {
		return domain.Event{ID: id, AccountID: "acc_1", MessageID: msg, Event: DeliveryStatus, URL: rcv.URL, Body: "{}"}
	}
	leasetest.Run(t, w.Run)
	waitFor(t, "the claim at start", func() bool { c, _ := st.state(); return len(c) == 1 })
	st.mu.Lock()
	st.due = []domain.Event{ev("evt_waiting", "msg_3")} // written behind msg_3's first event
	st.mu.Unlock()
	recorded := func(id string) func() bool { return func() bool { return st.done(id) } }
	for _, e := range []domain.Event{ev("evt_1", "msg_1"), ev("evt_2", "msg_2")} {
		w.Queue().Hand(context.Background(), []domain.Event{e})
		waitFor(t, e.ID+" posted", recorded(e.ID))
	}
	waiting.Note([]domain.Event{ev("evt_waiting", "msg_3")})
	w.Queue().Hand(context.Background(), []domain.Event{ev("evt_3", "msg_3")})
	waitFor(t, "the waiting event posted", recorded("evt_waiting"))
	// It was claimed, so an event of its message may wait behind it too:
	// its own outcome has the worker look again.
	waitFor(t, "a claim after the claimed event's outcome", func() bool { c, _ := st.state(); return len(c) >= 3 })
	claims, order := st.state()
	if want := []string{"evt_1", "evt_2", "evt_3", "evt_waiting"}; !slices.Equal(order, want) || !slices.Equal(claims, []int{0, 3, 4}) {
		t.Fatalf("outcomes recorded %v, claims made after %v outcomes; want %v, claims after 0, 3 and 4 outcomes "+
			"(at start, after evt_3's, after evt_waiting's)", order, claims, want)
	}
}
