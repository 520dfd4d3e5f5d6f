package dispatch

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake/intaketest"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// revokingProvider is an RCS platform that can take messages back: it
// asks for a fallback deadline ten minutes after each hand-over of a
// message with a fallback, and answers revocations from answer (default:
// taken back).
type revokingProvider struct {
	*fakeProvider
	now    func() time.Time
	mu     sync.Mutex
	answer []provider.Revocation // consumed in order; then Revoked
	asked  []string
}

func (p *revokingProvider) Submit(ctx context.Context, msgs []provider.Outbound) []provider.Result {
	out := p.fakeProvider.Submit(ctx, msgs)
	for i, m := range msgs {
		if _, ok := m.Content.SMSFallback(); ok && out[i].Err == nil {
			out[i].FallbackAt = p.now().Add(10 * time.Minute)
		}
	}
	return out
}

func (p *revokingProvider) Revoke(_ context.Context, msgs []provider.Outbound) []provider.Revocation {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]provider.Revocation, len(msgs))
	for i, m := range msgs {
		p.asked = append(p.asked, m.ID)
		out[i] = provider.Revocation{Revoked: true}
		if len(p.answer) > 0 {
			out[i], p.answer = p.answer[0], p.answer[1:]
		}
	}
	return out
}

func (p *revokingProvider) revoked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...)
}

// An RCS message with an SMS fallback that is not delivered by its
// provider's deadline is taken back and goes out as SMS; one delivered
// in time, or too late to take back, stays RCS; a provider that cannot
// answer is asked again; each ends with the right price.
func TestUndeliveredRCSIsRevokedAndFallsBack(t *testing.T) {
	const rcsPrice, smsPrice = 1 * ledger.Micro, 2 * ledger.Micro
	type step struct {
		advance time.Duration
		report  *provider.Status // a platform report before the dispatcher runs
	}
	cases := []struct {
		name        string
		answers     []provider.Revocation
		steps       []step
		wantRevokes int
		want        outcome
	}{
		{name: "not delivered in time: taken back, sent as SMS", steps: []step{{advance: 11 * time.Minute}},
			wantRevokes: 1, want: outcome{domain.Sent, domain.SMS, "sms-co", "plain", smsPrice, 0}},
		{name: "delivered in time: stays RCS, never asked",
			steps:       []step{{advance: time.Minute, report: &provider.Status{Status: domain.Delivered}}, {advance: 11 * time.Minute}},
			wantRevokes: 0, want: outcome{domain.Delivered, domain.RCS, "rcs-co", "", rcsPrice, smsPrice - rcsPrice}},
		{name: "too late to take back: stays RCS", answers: []provider.Revocation{{Revoked: false}},
			steps: []step{{advance: 11 * time.Minute}}, wantRevokes: 1, want: outcome{domain.Sent, domain.RCS, "rcs-co", "", rcsPrice, smsPrice - rcsPrice}},
		{name: "provider down: asked again later", answers: []provider.Revocation{{Err: &provider.Error{Code: "PROVIDER_ERROR", Temporary: true}}},
			steps:       []step{{advance: 11 * time.Minute}, {advance: time.Second}, {advance: time.Minute}},
			wantRevokes: 2, want: outcome{domain.Sent, domain.SMS, "sms-co", "plain", smsPrice, 0}},
		{name: "refused for good: stays RCS", answers: []provider.Revocation{{Err: &provider.Error{Code: "REJECTED", Message: "no"}}},
			steps: []step{{advance: 11 * time.Minute}}, wantRevokes: 1, want: outcome{domain.Sent, domain.RCS, "rcs-co", "", rcsPrice, smsPrice - rcsPrice}},
		{name: "the platform reports it expired: at the RCS price",
			steps:       []step{{advance: 9 * time.Minute, report: &provider.Status{Status: domain.Failed, ErrorCode: domain.CodeExpired}}, {advance: 11 * time.Minute}},
			wantRevokes: 0, want: outcome{domain.Failed, domain.RCS, "rcs-co", "", rcsPrice, smsPrice - rcsPrice}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rcsP := &revokingProvider{fakeProvider: &fakeProvider{name: "rcs-co"}, answer: c.answers}
			smsP := &fakeProvider{name: "sms-co"}
			f := newFixture(t, fakeRoutes{domain.RCS: rcsP, domain.SMS: smsP}, `{"home":{"smsSegment":2000000,"rcsMessage":1000000}}`, false)
			rcsP.now = f.clock
			ctx := context.Background()
			text := "plain"
			mid := f.send(t, intaketest.Draft{To: "5511999990012", Text: "rich", Type: "RCS", CallbackURL: "http://127.0.0.1:9/hooks",
				Fallback: &intaketest.FallbackRequest{Type: "SMS", Message: &text}})
			f.dispatch(t)
			m, err := f.st.Message(ctx, f.caller.Account.ID, f.caller.Key.Env, mid)
			if err != nil || m.Status != domain.Sent || m.NextAttemptAt.IsZero() {
				t.Fatalf("after hand-over: %s next %v %v", m.Status, m.NextAttemptAt, err)
			}
			for _, s := range c.steps {
				f.now.Add(s.advance.Milliseconds())
				if s.report != nil {
					r := *s.report
					r.Ref = "ref-" + mid
					if err := f.tracker.Statuses(ctx, "rcs-co", []provider.Status{r}); err != nil {
						t.Fatal(err)
					}
				}
				f.dispatch(t)
			}
			if got := len(rcsP.revoked()); got != c.wantRevokes {
				t.Fatalf("asked to take back %d times, want %d", got, c.wantRevokes)
			}
			checkOutcome(t, f, mid, smsP, c.want)
		})
	}
}

// checkOutcome compares a message with what a case wants: status, channel,
// provider, the SMS route's text, the final price and the refunds; and
// the webhooks tell each status once.
func checkOutcome(t *testing.T, f *fixture, mid string, smsP *fakeProvider, want outcome) {
	t.Helper()
	ctx := context.Background()
	m, err := f.st.Message(ctx, f.caller.Account.ID, f.caller.Key.Env, mid)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != want.status || m.Channel != want.channel || m.Provider != want.provider || m.Credits != want.credits {
		t.Fatalf("message: status %s channel %s provider %s credits %d", m.Status, m.Channel, m.Provider, m.Credits)
	}
	if !m.NextAttemptAt.IsZero() || m.LeaseOwner != "" {
		t.Fatalf("still queued: next %v lease %q", m.NextAttemptAt, m.LeaseOwner)
	}
	var bodies []string
	for _, o := range smsP.submitted() {
		bodies = append(bodies, o.Body)
	}
	if (want.body == "" && len(bodies) != 0) || (want.body != "" && (len(bodies) != 1 || bodies[0] != want.body)) {
		t.Fatalf("SMS route got %q, want %q", bodies, want.body)
	}
	evs, err := f.st.EventsForMessage(ctx, f.caller.Account.ID, mid)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, ev := range evs {
		var p struct{ Status string }
		_ = json.Unmarshal([]byte(ev.Body), &p)
		seen[p.Status]++
	}
	if seen[string(domain.Sent)] != 1 || seen[string(want.status)] != 1 {
		t.Fatalf("webhooks %v", seen)
	}
	debits, refunds := f.bill(ctx, mid)
	if refunds != want.refund || debits-refunds != m.Charged || m.Charged != want.credits {
		t.Fatalf("debits %d refunds %d charged %d; want refund %d", debits, refunds, m.Charged, want.refund)
	}
}
