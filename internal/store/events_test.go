package store_test

import (
	"context"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/store"
)

func newEvent(acc domain.Account, campaignID, messageID, kind string, due time.Time) domain.Event {
	return domain.Event{
		ID: id.New(id.Event, due), AccountID: acc.ID, CampaignID: campaignID, MessageID: messageID, Event: kind,
		URL: "https://hooks.example.com/cb", Body: `{"event":"` + kind + `"}`, State: domain.EventPending,
		NextAttemptAt: due, CreatedAt: due,
	}
}

func newAttempt(eventID string, when time.Time, status int, errText string) domain.Attempt {
	return domain.Attempt{ID: id.New(id.Attempt, when), EventID: eventID, AttemptedAt: when, StatusCode: status,
		Duration: 120 * time.Millisecond, Error: errText, Response: "ok"}
}

func TestEventQueue(t *testing.T) {
	eachTwoAccounts(t, func(t *testing.T, ctx context.Context, st *store.Store, acc, other domain.Account) {
		sent := newEvent(acc, "cmp_1", "msg_1", "message.sent", at(-2*time.Second))
		delivered := newEvent(acc, "cmp_1", "msg_1", "message.delivered", at(-time.Second))
		future := newEvent(acc, "cmp_1", "msg_2", "message.sent", at(time.Hour))
		foreign := newEvent(other, "cmp_2", "msg_1", "message.sent", at(time.Hour+time.Second))
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			return tx.InsertEvents(ctx, []domain.Event{sent, delivered, future, foreign})
		})
		pending(t, st, 4)

		// Leasing works like ClaimDue.
		const lease = 30 * time.Second
		claims := []struct {
			name, owner string
			now         time.Time
			want        []domain.Event
		}{
			// A message's next event waits for the one before it.
			{"due events, each message's first", "a", t0, []domain.Event{sent}},
			{"leased events are taken, the next waits", "b", t0.Add(lease - time.Millisecond), nil},
		}
		for _, c := range claims {
			got, err := st.ClaimEvents(ctx, c.owner, c.now, lease, 100)
			if err != nil {
				t.Fatal(err)
			}
			var want []domain.Event
			for _, e := range c.want {
				e.LeaseOwner, e.NextAttemptAt = c.owner, c.now.Add(lease)
				want = append(want, e)
			}
			sortEvents(got)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, want)
			}
		}

		// Owner a delivers one; the next is its to claim then, and it
		// reschedules that.
		okAttempt := newAttempt(sent.ID, at(time.Second), 200, "")
		failAttempt := newAttempt(delivered.ID, at(time.Second), 500, "server error")
		if err := st.RecordAttempts(ctx, "a", []domain.AttemptOutcome{{Attempt: okAttempt, State: domain.EventDelivered}}); err != nil {
			t.Fatal(err)
		}
		if got, err := st.ClaimEvents(ctx, "a", t0, lease, 100); err != nil || len(got) != 1 || got[0].ID != delivered.ID {
			t.Fatalf("the next event once the first is delivered: %+v %v", got, err)
		}
		if err := st.RecordAttempts(ctx, "a", []domain.AttemptOutcome{
			{Attempt: failAttempt, State: domain.EventPending, NextAttemptAt: at(5 * time.Minute)},
		}); err != nil {
			t.Fatal(err)
		}
		sent.State, sent.Attempts, sent.NextAttemptAt, sent.LastStatus, sent.DeliveredAt = domain.EventDelivered, 1, time.Time{}, 200, at(time.Second)
		delivered.Attempts, delivered.NextAttemptAt, delivered.LastStatus, delivered.LastError = 1, at(5*time.Minute), 500, "server error"
		checkEvents(t, st, acc.ID, "msg_1", sent, delivered)
		pending(t, st, 3)
		// The delivering attempt lives in its event's row: only the failure is a row.
		attemptRows(t, st, 1)
		checkAttempts(t, st, sent.ID, okAttempt)

		// Owner a's lease on the retry runs out and b takes it over; a's
		// late outcome is recorded as an attempt but leaves the event to b.
		if got, err := st.ClaimEvents(ctx, "a", at(5*time.Minute), lease, 100); err != nil || len(got) != 1 {
			t.Fatalf("reclaim by a: %v %v", got, err)
		}
		got, err := st.ClaimEvents(ctx, "b", at(5*time.Minute).Add(lease), lease, 100)
		if err != nil || len(got) != 1 || got[0].ID != delivered.ID {
			t.Fatalf("takeover by b: %+v %v", got, err)
		}
		late := newAttempt(delivered.ID, at(6*time.Minute), 200, "")
		if err := st.RecordAttempts(ctx, "a", []domain.AttemptOutcome{{Attempt: late, State: domain.EventDelivered}}); err != nil {
			t.Fatal(err)
		}
		delivered.LeaseOwner, delivered.NextAttemptAt = "b", at(5*time.Minute).Add(2*lease)
		checkEvents(t, st, acc.ID, "msg_1", sent, delivered)
		if err := st.RecordAttempts(ctx, "a", nil); err != nil {
			t.Errorf("empty batch: %v", err)
		}

		attempts, err := st.Attempts(ctx, delivered.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(attempts, []domain.Attempt{failAttempt, late}) {
			t.Errorf("attempts:\n got %+v\nwant %+v", attempts, []domain.Attempt{failAttempt, late})
		}

		redeliveries := []struct {
			name, account, event string
			wantErr              error
		}{
			{"other account's event", other.ID, sent.ID, domain.ErrNotFound},
			{"unknown event", acc.ID, "evt_missing", domain.ErrNotFound},
			{"delivered event", acc.ID, sent.ID, nil},
		}
		for _, r := range redeliveries {
			wantErr(t, r.name, st.Redeliver(ctx, r.account, r.event, at(10*time.Minute)), r.wantErr)
		}
		sent.State, sent.NextAttemptAt = domain.EventPending, at(10*time.Minute)
		checkEvents(t, st, acc.ID, "msg_1", sent, delivered)
		pending(t, st, 4)
		// Redelivery moves the delivery held in the row to the log, so the
		// next one cannot overwrite it.
		attemptRows(t, st, 3)
		checkAttempts(t, st, sent.ID, okAttempt)
		// The redelivered event is due again, as is b's retry whose lease ran out.
		got, err = st.ClaimEvents(ctx, "c", at(10*time.Minute), lease, 100)
		sortEvents(got)
		if err != nil || len(got) != 2 || got[0].ID != sent.ID || got[1].ID != delivered.ID {
			t.Errorf("claim after redelivery: %+v %v", got, err)
		}

		again := newAttempt(sent.ID, at(11*time.Minute), 204, "")
		if err := st.RecordAttempts(ctx, "c", []domain.AttemptOutcome{{Attempt: again, State: domain.EventDelivered}}); err != nil {
			t.Fatal(err)
		}
		attemptRows(t, st, 3)
		checkAttempts(t, st, sent.ID, okAttempt, again)
		log, err := st.MessageAttempts(ctx, acc.ID, "msg_1")
		if want := []domain.Attempt{okAttempt, again, failAttempt, late}; err != nil || !reflect.DeepEqual(log, want) {
			t.Errorf("message attempts (%v):\n got %+v\nwant %+v", err, log, want)
		}
		if log, err := st.MessageAttempts(ctx, other.ID, "msg_1"); err != nil || len(log) != 0 {
			t.Errorf("another account's view of msg_1's attempts: %+v %v", log, err)
		}

		byCampaign, err := st.EventsForCampaign(ctx, acc.ID, "cmp_1", 2)
		if err != nil || len(byCampaign) != 2 || byCampaign[0].ID != sent.ID || byCampaign[1].ID != delivered.ID {
			t.Errorf("events for campaign (limit 2): %+v %v", byCampaign, err)
		}
		checkEvents(t, st, other.ID, "msg_1", foreign)
	})
}

func attemptRows(t *testing.T, st *store.Store, want int) {
	t.Helper()
	n, err := st.CountRows(context.Background(), "webhook_attempts")
	if err != nil || n != want {
		t.Errorf("webhook_attempts rows %d (%v), want %d", n, err, want)
	}
}

func checkAttempts(t *testing.T, st *store.Store, eventID string, want ...domain.Attempt) {
	t.Helper()
	got, err := st.Attempts(context.Background(), eventID)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("attempts of %s (%v):\n got %+v\nwant %+v", eventID, err, got, want)
	}
}

func pending(t *testing.T, st *store.Store, want int) {
	t.Helper()
	n, err := st.PendingEvents(context.Background())
	if err != nil || n != want {
		t.Errorf("pending events %d (%v), want %d", n, err, want)
	}
}

// checkEvents compares a message's events, oldest first, with want.
func checkEvents(t *testing.T, st *store.Store, accountID, messageID string, want ...domain.Event) {
	t.Helper()
	got, err := st.EventsForMessage(context.Background(), accountID, messageID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events of %s:\n got %+v\nwant %+v", messageID, got, want)
	}
}

func sortEvents(evs []domain.Event) {
	sort.Slice(evs, func(i, j int) bool { return evs[i].ID < evs[j].ID })
}

// A message's events are claimed one at a time, in the order they were
// written, on any node: an event waits while an earlier one of its message
// is leased or due no later than it; a retry set for later lets the next
// go. A receiver answering again brings its waiting retries forward, still
// in order. New events that must wait behind an earlier one in the table
// are written without the hand-over's lease; one behind another of its
// message in the same batch keeps the lease with it.
func TestEventsOfAMessageClaimedInOrder(t *testing.T) {
	eachAccount(t, 0, func(t *testing.T, ctx context.Context, st *store.Store, acc domain.Account) {
		const lease = 30 * time.Second
		sent := newEvent(acc, "cmp_1", "msg_o", "message.sent", t0)
		delivered := newEvent(acc, "cmp_1", "msg_o", "message.delivered", t0.Add(time.Millisecond))
		other := newEvent(acc, "cmp_1", "msg_x", "message.sent", t0)
		elsewhere := newEvent(acc, "cmp_1", "msg_z", "message.sent", t0)
		elsewhere.URL = "https://other.example.com/cb"
		write(t, st, func(ctx context.Context, tx *store.Tx) error {
			return tx.InsertEvents(ctx, []domain.Event{sent, delivered, other, elsewhere})
		})
		claim := func(owner string, now time.Time, want ...string) {
			t.Helper()
			got, err := st.ClaimEvents(ctx, owner, now, lease, 100)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, e := range got {
				ids = append(ids, e.ID)
			}
			sort.Strings(ids)
			sort.Strings(want)
			if !reflect.DeepEqual(ids, want) {
				t.Fatalf("%s claims at %s: %v, want %v", owner, now.Sub(t0), ids, want)
			}
		}
		record := func(owner string, e domain.Event, state string, next time.Time) {
			t.Helper()
			o := domain.AttemptOutcome{Attempt: newAttempt(e.ID, t0, 500, "x"), State: state, NextAttemptAt: next}
			if state == domain.EventDelivered {
				o.Attempt.StatusCode, o.Attempt.Error = 204, ""
			}
			if err := st.RecordAttempts(ctx, owner, []domain.AttemptOutcome{o}); err != nil {
				t.Fatal(err)
			}
		}
		now := t0.Add(time.Second)
		claim("a", now, sent.ID, other.ID, elsewhere.ID)
		claim("b", now) // delivered waits while sent is in a's hands
		record("a", sent, domain.EventPending, t0.Add(time.Hour))
		claim("b", now, delivered.ID) // sent's retry is for later: the next goes
		record("b", delivered, domain.EventPending, t0.Add(2*time.Hour))
		record("a", elsewhere, domain.EventPending, t0.Add(3*time.Hour))

		// The receiver answers again: its waiting events are due now, in order.
		now = now.Add(time.Second)
		if n, err := st.HurryEvents(ctx, acc.ID, sent.URL, now); err != nil || n != 2 {
			t.Fatalf("hurried %d events (%v), want sent and delivered", n, err)
		}
		claim("b", now, sent.ID) // not delivered, due at the same time behind it
		record("b", sent, domain.EventDelivered, time.Time{})
		claim("b", now, delivered.ID)
		if evs, err := st.EventsForMessage(ctx, acc.ID, "msg_z"); err != nil || !evs[0].NextAttemptAt.Equal(t0.Add(3*time.Hour)) {
			t.Fatalf("another receiver's retry moved: %+v %v", evs, err)
		}

		// New events leased for a hand-over. One behind delivered (leased
		// to b) waits in the table without the lease, and so does the
		// event behind it in the batch. The second event of a new message
		// keeps the lease behind the first: the node it is handed to posts
		// it after the first (domain.Event.Then).
		leased := func(e domain.Event) domain.Event {
			e.LeaseOwner, e.NextAttemptAt = "n1", now.Add(lease)
			return e
		}
		read := leased(newEvent(acc, "cmp_1", "msg_o", "message.read", now))
		reread := leased(newEvent(acc, "cmp_1", "msg_o", "message.read", now))
		first := leased(newEvent(acc, "cmp_1", "msg_y", "message.sent", now))
		second := leased(newEvent(acc, "cmp_1", "msg_y", "message.delivered", now))
		// A message's first steps (NoEarlier: nothing in the table to
		// wait for) go the same way.
		fresh1 := leased(newEvent(acc, "cmp_1", "msg_n", "message.sent", now))
		fresh2 := leased(newEvent(acc, "cmp_1", "msg_n", "message.delivered", now))
		fresh1.NoEarlier, fresh2.NoEarlier = true, true
		batch := []domain.Event{read, first, reread, second, fresh1, fresh2}
		write(t, st, func(ctx context.Context, tx *store.Tx) error { return tx.InsertEvents(ctx, batch) })
		var leases []string
		for _, e := range batch {
			leases = append(leases, e.LeaseOwner)
		}
		if want := []string{"", "n1", "", "n1", "n1", "n1"}; !reflect.DeepEqual(leases, want) {
			t.Fatalf("leases after the insert: %q, want %q", leases, want)
		}
		for _, e := range []domain.Event{batch[0], batch[2]} {
			stored, err := st.AccountEvent(ctx, acc.ID, e.ID)
			if err != nil || stored.LeaseOwner != "" || !stored.NextAttemptAt.Equal(now) {
				t.Fatalf("a held event as stored: %+v %v", stored, err)
			}
		}
		claim("c", now) // read and reread wait for delivered (b's); n1 holds the rest
		record("b", delivered, domain.EventDelivered, time.Time{})
		claim("c", now, read.ID)
		record("c", read, domain.EventDelivered, time.Time{})
		claim("c", now, reread.ID)
		record("c", reread, domain.EventDelivered, time.Time{})

		// n1 dies with its events: when their leases run out, each
		// message's first goes before the one behind it (and a's lapsed
		// lease of other comes due with them).
		lapsed := now.Add(lease + time.Second)
		claim("c", lapsed, other.ID, first.ID, fresh1.ID)
		record("c", first, domain.EventDelivered, time.Time{})
		record("c", fresh1, domain.EventDelivered, time.Time{})
		claim("c", lapsed, second.ID, fresh2.ID)
	})
}
