package message

import (
	"context"
	"testing"

	"msgsvc/internal/domain"
	"msgsvc/internal/provider"
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
			mid := f.send(t, Draft{To: "5511999990010", Text: "long", Type: "SMS"})
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
	mid := f.send(t, Draft{To: "5511999990010", Text: "hi", Type: "SMS"})
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
	evs, err := f.st.EventsForMessage(ctx, f.caller.Account.ID, mid)
	if err != nil || len(evs) != 0 {
		// the send had no callback: no events; the history tells the story
		t.Fatalf("events %v %v", evs, err)
	}
}
