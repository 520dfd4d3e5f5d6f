package tracking

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

type receiptStoreFake struct {
	awaiting []domain.Message
	parts    map[string][]domain.Part
	windows  [][2]time.Time
}

func (f *receiptStoreFake) AwaitingReport(_ context.Context, _ string, since, before, afterAt time.Time, afterID string, limit int) ([]domain.Message, error) {
	f.windows = append(f.windows, [2]time.Time{since, before})
	var out []domain.Message
	for _, m := range f.awaiting {
		if m.UpdatedAt.Before(since) || !m.UpdatedAt.Before(before) {
			continue
		}
		if m.UpdatedAt.Before(afterAt) || (m.UpdatedAt.Equal(afterAt) && m.ID <= afterID) {
			continue
		}
		out = append(out, m)
	}
	return out[:min(limit, len(out))], nil
}

func (f *receiptStoreFake) UnreportedParts(_ context.Context, _ string, ids []string) (map[string][]domain.Part, error) {
	out := map[string][]domain.Part{}
	for _, id := range ids {
		if ps, ok := f.parts[id]; ok {
			out[id] = ps
		}
	}
	return out, nil
}

type querierFake struct {
	asked   [][]provider.QueryRef
	answers map[string]provider.Status
}

func (q *querierFake) Query(_ context.Context, refs []provider.QueryRef) ([]provider.Status, error) {
	q.asked = append(q.asked, refs)
	var out []provider.Status
	for _, r := range refs {
		if st, ok := q.answers[r.Ref]; ok {
			out = append(out, st)
		}
	}
	return out, nil
}

type statusSinkFake struct{ got []provider.Status }

func (s *statusSinkFake) Statuses(_ context.Context, _ string, sts []provider.Status) error {
	s.got = append(s.got, sts...)
	return nil
}

func refsOf(qs []provider.QueryRef) []string {
	var out []string
	for _, q := range qs {
		out = append(out, q.Ref+"/"+q.From)
	}
	return out
}

// Overdue messages are asked about once their receipt is late, by part
// when they went in parts; what the provider answers is recorded; a
// message still unanswered is asked about again after a longer wait.
func TestReceiptChecker(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	st := &receiptStoreFake{
		awaiting: []domain.Message{
			{ID: "msg_a", Channel: domain.SMS, From: "Acme", ProviderRef: "R1", UpdatedAt: now.Add(-20 * time.Minute)},
			{ID: "msg_b", Channel: domain.SMS, ProviderRef: "R2", UpdatedAt: now.Add(-15 * time.Minute)},
			{ID: "msg_c", Channel: domain.SMS, ProviderRef: "P1", UpdatedAt: now.Add(-12 * time.Minute)},
			{ID: "msg_new", Channel: domain.SMS, ProviderRef: "R9", UpdatedAt: now.Add(-time.Minute)},
		},
		parts: map[string][]domain.Part{"msg_c": {{Ref: "P2", MessageID: "msg_c", Part: 2, Parts: 3}, {Ref: "P3", MessageID: "msg_c", Part: 3, Parts: 3}}},
	}
	q := &querierFake{answers: map[string]provider.Status{"R1": {Ref: "R1", Status: domain.Delivered, At: now}}}
	sink := &statusSinkFake{}
	clock := now
	c := &ReceiptChecker{Store: st, Providers: map[string]provider.Querier{"carrier": q}, Tracker: sink,
		Overdue: 10 * time.Minute, Now: func() time.Time { return clock }, Log: slog.New(slog.DiscardHandler)}

	n, err := c.Check(context.Background(), "carrier")
	if err != nil || n != 1 {
		t.Fatalf("Check = %d, %v", n, err)
	}
	if w := st.windows[0]; !w[1].Equal(now.Add(-10*time.Minute)) || !w[0].Equal(now.Add(-72*time.Hour)) {
		t.Errorf("asked for the window %v", w)
	}
	if got, want := refsOf(q.asked[0]), []string{"R1/Acme", "R2/", "P2/", "P3/"}; !slices.Equal(got, want) {
		t.Errorf("asked %v, want %v (the new message is not overdue; a message in parts by its unreported parts)", got, want)
	}
	if len(sink.got) != 1 || sink.got[0].Ref != "R1" || sink.got[0].Status != domain.Delivered {
		t.Errorf("recorded %+v", sink.got)
	}

	// R1 settled; the others wait before being asked again.
	st.awaiting = st.awaiting[1:]
	clock = now.Add(5 * time.Minute)
	if _, err := c.Check(context.Background(), "carrier"); err != nil || len(q.asked) != 1 {
		t.Fatalf("asked again too soon: %v %v", q.asked, err)
	}
	clock = now.Add(21 * time.Minute)
	if _, err := c.Check(context.Background(), "carrier"); err != nil || len(q.asked) != 2 {
		t.Fatalf("not asked again after the wait: %d %v", len(q.asked), err)
	}
	if got, want := refsOf(q.asked[1]), []string{"R2/", "P2/", "P3/", "R9/"}; !slices.Equal(got, want) {
		t.Errorf("second round asked %v, want %v", got, want)
	}
	if _, ok := c.next["msg_a"]; ok {
		t.Error("a settled message is still remembered")
	}
	// The wait doubles: the third question comes 40 minutes after the second.
	clock = now.Add(21*time.Minute + 39*time.Minute)
	c.Check(context.Background(), "carrier")
	if got := refsOf(q.asked[len(q.asked)-1]); slices.Contains(got, "R2/") && len(q.asked) == 3 {
		t.Errorf("asked about R2 again after 39 minutes: %v", got)
	}
}
