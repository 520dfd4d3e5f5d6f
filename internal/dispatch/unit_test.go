package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/tracking"
)

// memClaimer is the messages table in memory: ClaimDue leases what is due.
type memClaimer struct {
	mu   sync.Mutex
	msgs []domain.Message
}

func (c *memClaimer) ClaimDue(_ context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]domain.Message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []domain.Message
	for i := range c.msgs {
		m := &c.msgs[i]
		if len(out) == limit || m.Status != domain.Sending || m.NextAttemptAt.After(now) {
			continue
		}
		m.LeaseOwner, m.NextAttemptAt = owner, now.Add(lease)
		out = append(out, *m)
	}
	return out, nil
}

func (c *memClaimer) ReleaseMessages(context.Context, string, []string, time.Time) error { return nil }

func (c *memClaimer) RenewMessages(_ context.Context, _ string, held map[string]time.Time, _ time.Time, _ time.Duration) ([]string, error) {
	var out []string
	for id := range held {
		out = append(out, id)
	}
	return out, nil
}

// recorder keeps the reports a dispatch records.
type recorder struct {
	mu      sync.Mutex
	reports []tracking.Report
}

func (r *recorder) Apply(_ context.Context, rs []tracking.Report) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, rs...)
	return nil
}

// answering is a provider that answers each number as told: a reference,
// or an error.
type answering struct {
	name    string
	answers map[string]*provider.Error // by number; nil: taken
}

func (p *answering) Name() string { return p.name }

func (p *answering) Submit(_ context.Context, msgs []provider.Outbound) []provider.Result {
	out := make([]provider.Result, len(msgs))
	for i, m := range msgs {
		if err := p.answers[m.To]; err != nil {
			out[i].Err = err
			continue
		}
		out[i].Ref = "ref-" + m.ID
	}
	return out
}

// A claimed batch, without a database: each message's outcome is the one
// report recorded for it, with the lease holder's name, the route and the
// cost; an expired message is not handed over, a message without a route
// fails NO_ROUTE, a temporary refusal is retried after 5 s and a refusal
// for good is final.
func TestDispatchReportsEachOutcome(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	sms := &answering{name: "smsc", answers: map[string]*provider.Error{
		"5511999990002": {Code: domain.CodeProviderError, Message: "throttled", Temporary: true},
		"5511999990003": {Code: domain.CodeInvalidNumber, Message: "no such number"},
	}}
	msg := func(id, to string, ch domain.Channel, expires time.Time) domain.Message {
		return domain.Message{ID: id, AccountID: "acc_1", Env: domain.Live, To: to, Type: ch, Channel: ch, Status: domain.Sending,
			Body: "hi", Attempts: 1, ExpiresAt: expires, NextAttemptAt: now.Add(-time.Second)}
	}
	later := now.Add(time.Hour)
	claimer := &memClaimer{msgs: []domain.Message{
		msg("m1", "5511999990001", domain.SMS, later),
		msg("m2", "5511999990002", domain.SMS, later),
		msg("m3", "5511999990003", domain.SMS, later),
		msg("m4", "5511999990004", domain.SMS, now),
		msg("m5", "5511999990005", domain.WhatsApp, later),
	}}
	rec := &recorder{}
	var logged bytes.Buffer
	d := NewDispatcher(DispatcherConfig{Store: claimer, Routes: fakeRoutes{domain.SMS: sms}, Tracker: rec, Owner: "node-1",
		Lease: 30 * time.Second, Now: func() time.Time { return now }, Log: slog.New(slog.NewJSONHandler(&logged, nil))})
	n, err := d.RunOnce(context.Background())
	if err != nil || n != 5 {
		t.Fatalf("claimed %d (%v), want 5", n, err)
	}
	// The retry is told to the operator, once for the batch.
	var retried []map[string]any
	for line := range strings.Lines(logged.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if strings.HasPrefix(rec["msg"].(string), "hand-over failed for now") {
			retried = append(retried, rec)
		}
	}
	if len(retried) != 1 || retried[0]["level"] != "WARN" || retried[0]["provider"] != "smsc" || retried[0]["messages"] != 1.0 ||
		retried[0]["err"] != "throttled" {
		t.Errorf("retry logged as %v, want one warning naming smsc, 1 message and its error", retried)
	}
	got := map[string]tracking.Report{}
	for _, r := range rec.reports {
		if _, dup := got[r.MessageID]; dup {
			t.Fatalf("two reports for %s", r.MessageID)
		}
		got[r.MessageID] = r
	}
	want := map[string]tracking.Report{
		"m1": {Kind: tracking.Accepted, MessageID: "m1", Provider: "smsc", Ref: "ref-m1", At: now, LeaseOwner: "node-1"},
		"m2": {Kind: tracking.Retry, MessageID: "m2", Provider: "smsc", ErrorCode: domain.CodeProviderError, ErrorMessage: "throttled",
			At: now, RetryAt: now.Add(5 * time.Second), LeaseOwner: "node-1"},
		"m3": {Kind: tracking.Rejected, MessageID: "m3", Provider: "smsc", ErrorCode: domain.CodeInvalidNumber,
			ErrorMessage: "no such number", At: now, LeaseOwner: "node-1"},
		"m4": {Kind: tracking.Expire, MessageID: "m4", At: now},
		"m5": {Kind: tracking.Rejected, MessageID: "m5", ErrorCode: domain.CodeNoRoute, At: now, LeaseOwner: "node-1"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d messages reported, want m1..m5", len(got))
	}
	for id, w := range want {
		if g := got[id]; !reportsEqual(g, w) {
			t.Errorf("%s: %+v\nwant %+v", id, g, w)
		}
	}
}

func reportsEqual(a, b tracking.Report) bool {
	return a.Kind == b.Kind && a.MessageID == b.MessageID && a.Provider == b.Provider && a.Ref == b.Ref &&
		a.ErrorCode == b.ErrorCode && a.ErrorMessage == b.ErrorMessage && a.At.Equal(b.At) && a.RetryAt.Equal(b.RetryAt) &&
		a.LeaseOwner == b.LeaseOwner && slices.Equal(a.Parts, b.Parts)
}
