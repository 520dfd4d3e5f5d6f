package dispatch

import (
	"context"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake/intaketest"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/store"
)

// partsProvider takes every message in three parts, like an SMSC taking a
// three-segment SMS.
type partsProvider struct{ fakeProvider }

func (p *partsProvider) Submit(ctx context.Context, msgs []provider.Outbound) []provider.Result {
	out := p.fakeProvider.Submit(ctx, msgs)
	for i, m := range msgs {
		out[i].Parts = []string{m.ID + "-1", m.ID + "-2", m.ID + "-3"}
		out[i].Ref = out[i].Parts[0]
	}
	return out
}

func TestLongMessageIsDeliveredWhenEveryPartIs(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name     string
		receipts []provider.Status // by part suffix in Ref
		want     domain.Status
		code     string
	}{
		{"two of three parts", []provider.Status{{Ref: "-1", Status: domain.Delivered}, {Ref: "-3", Status: domain.Delivered}}, domain.Sent, ""},
		{"every part", []provider.Status{{Ref: "-2", Status: domain.Delivered}, {Ref: "-1", Status: domain.Delivered},
			{Ref: "-3", Status: domain.Delivered}}, domain.Delivered, ""},
		{"one part fails", []provider.Status{{Ref: "-1", Status: domain.Delivered},
			{Ref: "-2", Status: domain.Failed, ErrorCode: "UNDELIVERED"}}, domain.Failed, "UNDELIVERED"},
		{"a receipt twice", []provider.Status{{Ref: "-1", Status: domain.Delivered}, {Ref: "-1", Status: domain.Delivered},
			{Ref: "-2", Status: domain.Delivered}}, domain.Sent, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sms := &partsProvider{fakeProvider{name: "smsc"}}
			f := newFixture(t, fakeRoutes{domain.SMS: sms}, "", false)
			mid := f.send(t, intaketest.Draft{To: "5511999990010", Text: "long", Type: "SMS"})
			f.dispatch(t)
			for _, r := range c.receipts {
				r.Ref = mid + r.Ref
				if err := f.tracker.Statuses(ctx, "smsc", []provider.Status{r}); err != nil {
					t.Fatal(err)
				}
			}
			m, err := f.st.Message(ctx, f.caller.Account.ID, f.caller.Key.Env, mid)
			if err != nil {
				t.Fatal(err)
			}
			if m.Status != c.want || m.ErrorCode != c.code {
				t.Fatalf("status %s (%s), want %s (%s)", m.Status, m.ErrorCode, c.want, c.code)
			}
		})
	}
}

// A receipt may overtake the answer to its own submission: it is kept and
// applied when the answer records the provider's id.
func TestReceiptBeforeItsSubmissionAnswer(t *testing.T) {
	ctx := context.Background()
	sms := &fakeProvider{name: "smsc"}
	f := newFixture(t, fakeRoutes{domain.SMS: sms}, "", false)
	mid := f.send(t, intaketest.Draft{To: "5511999990010", Text: "hi", Type: "SMS"})
	// fakeProvider answers with Ref "ref-<id>"; the receipt comes first.
	if err := f.tracker.Statuses(ctx, "smsc", []provider.Status{{Ref: "ref-" + mid, Status: domain.Delivered}}); err != nil {
		t.Fatal(err)
	}
	m, _ := f.st.Message(ctx, f.caller.Account.ID, f.caller.Key.Env, mid)
	if m.Status != domain.Sending {
		t.Fatalf("status %s before the submission's answer", m.Status)
	}
	f.dispatch(t)
	m, _ = f.st.Message(ctx, f.caller.Account.ID, f.caller.Key.Env, mid)
	if m.Status != domain.Delivered || m.SentAt.IsZero() {
		t.Fatalf("status %s after the answer, want DELIVERED with SENT before it", m.Status)
	}
	// The send had no callback: its events are written for the events
	// feed, in order, and none is to be delivered.
	evs, err := f.st.EventsForMessage(ctx, f.caller.Account.ID, mid)
	if err != nil || len(evs) != 2 {
		t.Fatalf("events %v %v, want SENT and DELIVERED", evs, err)
	}
	for i, want := range []string{`"status":"SENT"`, `"status":"DELIVERED"`} {
		if ev := evs[i]; !strings.Contains(ev.Body, want) || ev.State != domain.EventNone || ev.URL != "" || !ev.NextAttemptAt.IsZero() {
			t.Errorf("event %d: %+v, want %s for the feed only", i, ev, want)
		}
	}
}

// On PostgreSQL a receipt's transaction and its submission answer's run
// side by side: when each looks before the other commits, the answer finds
// no parked report and the receipt finds no message, so the receipt is
// parked for an id that is recorded an instant later. Unpark (the sweeper
// calls it every second) applies it; a report for an id nobody carries
// stays parked.
func TestParkedReportMissedByItsAnswer(t *testing.T) {
	ctx := context.Background()
	sms := &partsProvider{fakeProvider{name: "smsc"}}
	f := newFixture(t, fakeRoutes{domain.SMS: sms}, "", false)
	mid := f.send(t, intaketest.Draft{To: "5511999990010", Text: "long", Type: "SMS"})
	f.dispatch(t)
	if err := f.tracker.Statuses(ctx, "smsc", []provider.Status{{Ref: mid + "-1", Status: domain.Delivered},
		{Ref: mid + "-3", Status: domain.Delivered}}); err != nil {
		t.Fatal(err)
	}
	// What the receipt of part 2 wrote, having looked before the answer
	// that recorded the parts was committed; and one for an unknown id.
	park := []domain.PendingReport{
		{Provider: "smsc", Ref: mid + "-2", Status: domain.Delivered, ReportedAt: f.clock(), ReceivedAt: f.clock()},
		{Provider: "smsc", Ref: "nobody", Status: domain.Delivered, ReportedAt: f.clock(), ReceivedAt: f.clock()},
	}
	if err := f.st.Write(ctx, func(tx *store.Tx) error { return tx.ParkReports(ctx, park) }); err != nil {
		t.Fatal(err)
	}
	if m, _ := f.st.Message(ctx, f.caller.Account.ID, f.caller.Key.Env, mid); m.Status != domain.Sent {
		t.Fatalf("status %s with a part's receipt parked, want SENT", m.Status)
	}
	n, err := f.tracker.Unpark(ctx)
	if err != nil || n != 1 {
		t.Fatalf("Unpark applied %d (%v), want the one report whose id is known", n, err)
	}
	if m, _ := f.st.Message(ctx, f.caller.Account.ID, f.caller.Key.Env, mid); m.Status != domain.Delivered {
		t.Fatalf("status %s after Unpark, want DELIVERED", m.Status)
	}
	if left, err := f.st.KnownParkedRefs(ctx, 10); err != nil || len(left) != 0 {
		t.Fatalf("known parked refs after Unpark: %v %v", left, err)
	}
	if n, err := f.tracker.Unpark(ctx); err != nil || n != 0 {
		t.Fatalf("second Unpark applied %d (%v)", n, err)
	}
}
