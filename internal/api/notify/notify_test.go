package notify

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/tracking"
	"github.com/msgsvc/msgsvc/internal/tracking/trackingtest"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// handoff is a local webhook worker that keeps what it was handed.
type handoff struct{ got []domain.Event }

func (h *handoff) Owner() string        { return "node-1" }
func (h *handoff) Lease() time.Duration { return 30 * time.Second }
func (h *handoff) Hand(_ context.Context, evs []domain.Event) int {
	h.got = append(h.got, evs...)
	return len(evs)
}

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func msg(id, callback string) domain.Message {
	return domain.Message{ID: id, CampaignID: "cmp_" + id, AccountID: "acc_1", Env: domain.Live, To: "5511999990010",
		Type: domain.SMS, Channel: domain.SMS, Status: domain.Delivered, CallbackURL: callback, CreatedAt: t0}
}

// Every step of every change is a delivery_status event, in order, with
// the body the webhook renders for that status; those of a send with a
// callbackUrl are leased to the local worker and handed to it after the
// commit, the others are kept for the feed only.
func TestStatusEvents(t *testing.T) {
	ctx := context.Background()
	h := &handoff{}
	woken := 0
	w := &Webhooks[EventTx]{Handoff: h, Wake: func() { woken++ }}
	st := &trackingtest.Store{}
	recorded := t0.Add(time.Minute)
	withHook, feedOnly := msg("m1", "https://hooks.example.com/cb"), msg("m2", "")
	cs := []tracking.Change{
		{Message: &withHook, Was: domain.Sending, Steps: []domain.Status{domain.Sent, domain.Delivered}, At: t0.Add(time.Second), Recorded: recorded},
		{Message: &feedOnly, Was: domain.Sent, Steps: []domain.Status{domain.Delivered}, At: t0.Add(2 * time.Second), Recorded: recorded},
	}
	var after tracking.After
	err := st.Write(ctx, func(tx *trackingtest.Tx) error {
		var err error
		after, err = w.Changed(ctx, tx, cs)
		return err
	})
	if err != nil || after == nil {
		t.Fatalf("changed: %v (after %v)", err, after != nil)
	}
	evs := st.Rows().Events
	want := []struct {
		m      domain.Message
		status domain.Status
		at     time.Time
	}{{withHook, domain.Sent, t0.Add(time.Second)}, {withHook, domain.Delivered, t0.Add(time.Second)},
		{feedOnly, domain.Delivered, t0.Add(2 * time.Second)}}
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d", len(evs), len(want))
	}
	for i, x := range want {
		ev := evs[i]
		if ev.Event != webhook.DeliveryStatus || ev.MessageID != x.m.ID || ev.CampaignID != x.m.CampaignID || ev.URL != x.m.CallbackURL ||
			ev.Body != webhook.StatusBody(x.m, x.status, x.at) || !ev.CreatedAt.Equal(x.at) {
			t.Fatalf("event %d: %+v, want %s of %s at %s", i, ev, x.status, x.m.ID, x.at)
		}
		leased := x.m.CallbackURL != ""
		if leased && (ev.LeaseOwner != "node-1" || !ev.NextAttemptAt.Equal(recorded.Add(30*time.Second))) {
			t.Fatalf("event %d: lease %q until %s, want node-1's until the record plus its lease", i, ev.LeaseOwner, ev.NextAttemptAt)
		}
		if !leased && (ev.LeaseOwner != "" || !ev.NextAttemptAt.Equal(x.at)) {
			t.Fatalf("event %d of a send without callback: leased %q", i, ev.LeaseOwner)
		}
		// The steps of a message that was SENDING are its first: its
		// events need not look for earlier ones in the table.
		if first := x.m.ID == withHook.ID; ev.NoEarlier != first {
			t.Fatalf("event %d: NoEarlier %v, want %v", i, ev.NoEarlier, first)
		}
	}
	// A message that the fraud guard held may have stepped before it
	// was SENDING: its events look.
	heldOnce := withHook
	heldOnce.HeldAt = t0
	err = st.Write(ctx, func(tx *trackingtest.Tx) error {
		_, err := w.Changed(ctx, tx, []tracking.Change{{Message: &heldOnce, Was: domain.Sending, Steps: []domain.Status{domain.Sent},
			At: t0.Add(3 * time.Second), Recorded: recorded}})
		return err
	})
	if evs := st.Rows().Events; err != nil || len(evs) != len(want)+1 || evs[len(want)].NoEarlier {
		t.Fatalf("a once held message's event: %v, %+v", err, evs[len(want):])
	}
	if len(h.got) != 0 {
		t.Fatal("events handed over before the commit")
	}
	after(ctx)
	// The message's second webhook rides behind its first, for the one
	// poster of both to post in order.
	if len(h.got) != 1 || h.got[0].ID != evs[0].ID || len(h.got[0].Then) != 1 || h.got[0].Then[0].ID != evs[1].ID || woken != 0 {
		t.Fatalf("handed %+v, woke %d times; want the two webhooks handed, the second behind the first, no wake", h.got, woken)
	}
}

// Without a local worker, events are written unleased and the worker is
// woken to claim them.
func TestStatusEventsWithoutHandoff(t *testing.T) {
	ctx := context.Background()
	woken := 0
	w := &Webhooks[EventTx]{Wake: func() { woken++ }}
	st := &trackingtest.Store{}
	m := msg("m1", "https://hooks.example.com/cb")
	var after tracking.After
	if err := st.Write(ctx, func(tx *trackingtest.Tx) error {
		var err error
		after, err = w.Changed(ctx, tx, []tracking.Change{{Message: &m, Was: domain.Sent, Steps: []domain.Status{domain.Failed}, At: t0,
			Recorded: t0}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	after(ctx)
	evs := st.Rows().Events
	if len(evs) != 1 || evs[0].LeaseOwner != "" || !evs[0].NextAttemptAt.Equal(t0) || woken != 1 {
		t.Fatalf("events %+v, woken %d; want one unleased event due now and one wake", evs, woken)
	}
}

// A reply is a message_received event: a webhook to the callback of the
// campaign it answers, else for the feed only.
func TestReplyEvents(t *testing.T) {
	ctx := context.Background()
	woken := 0
	w := &Webhooks[EventTx]{Handoff: &handoff{}, Wake: func() { woken++ }}
	st := &trackingtest.Store{}
	answered := msg("m1", "https://hooks.example.com/cb")
	in := domain.Inbound{ID: "in_1", AccountID: "acc_1", Env: domain.Live, Phone: "5511999990010", Channel: domain.SMS, Body: "yes",
		CampaignID: answered.CampaignID}
	loose := in
	loose.ID, loose.CampaignID = "in_2", ""
	now := t0.Add(time.Hour)
	var afters []tracking.After
	for _, r := range []tracking.Reply{{Inbound: in, At: t0.Add(time.Minute), Answers: answered, Recorded: now},
		{Inbound: loose, At: t0.Add(time.Minute), Recorded: now}} {
		if err := st.Write(ctx, func(tx *trackingtest.Tx) error {
			after, err := w.Received(ctx, tx, r)
			afters = append(afters, after)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	evs := st.Rows().Events
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2", len(evs))
	}
	if ev := evs[0]; ev.Event != webhook.MessageReceived || ev.URL != answered.CallbackURL || ev.CampaignID != answered.CampaignID ||
		ev.LeaseOwner != "" || !ev.CreatedAt.Equal(now) ||
		ev.Body != webhook.ReplyBody(answered.CampaignID, in.Phone, "yes", domain.SMS, t0.Add(time.Minute)) {
		t.Fatalf("reply event %+v", ev)
	}
	if ev := evs[1]; ev.URL != "" || ev.CampaignID != "" || ev.Body != webhook.ReplyBody("", in.Phone, "yes", domain.SMS, t0.Add(time.Minute)) {
		t.Fatalf("unanswered reply's event %+v, want it for the feed only", ev)
	}
	if afters[0] == nil || afters[1] != nil {
		t.Fatal("only the webhook wakes the worker")
	}
	afters[0](ctx)
	if woken != 1 {
		t.Fatalf("woken %d times", woken)
	}
}

// Each message's events are handed over as one item, in their order:
// those behind its first ride in its Then. Events of no message (replies)
// stay on their own.
func TestLinedHandsAMessagesEventsAsOne(t *testing.T) {
	ev := func(id, msg string) domain.Event { return domain.Event{ID: id, MessageID: msg} }
	got := lined([]domain.Event{ev("a1", "m_a"), ev("b1", "m_b"), ev("a2", "m_a"), ev("r1", ""), ev("r2", ""),
		ev("b2", "m_b"), ev("c1", "m_c"), ev("a3", "m_a")})
	var shape []string
	for _, e := range got {
		s := e.ID
		for _, n := range e.Then {
			s += "<" + n.ID
		}
		shape = append(shape, s)
	}
	if want := []string{"a1<a2<a3", "b1<b2", "r1", "r2", "c1"}; !slices.Equal(shape, want) {
		t.Fatalf("lined: %q, want %q", shape, want)
	}
	one := []domain.Event{ev("a1", "m_a"), ev("b1", "m_b")}
	if got := lined(one); &got[0] != &one[0] {
		t.Fatal("events of distinct messages were copied")
	}
}
