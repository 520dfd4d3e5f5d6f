package dispatch

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/intake/intaketest"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/message"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/simulator"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
	"github.com/msgsvc/msgsvc/internal/tracking"
)

// fakeProvider accepts everything; as an domain.RCS provider it may answer
// capability questions (capable) or refuse devices itself (refuse).
type fakeProvider struct {
	name    string
	capable map[string]bool // nil: no Capabilities method is used
	refuse  map[string]bool // Submit answers RCS_NOT_SUPPORTED for these
	asked   atomic.Int64
	mu      sync.Mutex
	got     []provider.Outbound
}

func (p *fakeProvider) Name() string { return p.name }

func (p *fakeProvider) Submit(_ context.Context, msgs []provider.Outbound) []provider.Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]provider.Result, len(msgs))
	for i, m := range msgs {
		p.got = append(p.got, m)
		if p.refuse[m.To] {
			out[i].Err = &provider.Error{Code: domain.CodeRCSNotSupported, Message: "no domain.RCS on this phone"}
			continue
		}
		out[i].Ref = "ref-" + m.ID
	}
	return out
}

func (p *fakeProvider) submitted() []provider.Outbound {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]provider.Outbound(nil), p.got...)
}

// checkingProvider adds the optional capability question.
type checkingProvider struct{ *fakeProvider }

func (p checkingProvider) Capabilities(_ context.Context, numbers []string) map[string]bool {
	p.asked.Add(1)
	out := map[string]bool{}
	for _, n := range numbers {
		if v, ok := p.capable[n]; ok {
			out[n] = v
		}
	}
	return out
}

type fakeRoutes map[domain.Channel]provider.Provider // by channel

func (r fakeRoutes) Pick(_ domain.Environment, channel domain.Channel, _ string) provider.Provider {
	return r[channel]
}
func (r fakeRoutes) ChooseFor(m *domain.Message, _ func(string) bool) provider.Decision {
	return provider.Decision{Provider: r.Pick(m.Env, m.Channel, m.CountryCode)}
}
func (r fakeRoutes) Report(string, bool) {}
func (r fakeRoutes) ByName(name string) provider.Provider {
	for _, p := range r {
		if p.Name() == name {
			return p
		}
	}
	return nil
}
func (r fakeRoutes) PickName(env domain.Environment, channel domain.Channel, cc string) string {
	if p := r.Pick(env, channel, cc); p != nil {
		return p.Name()
	}
	return ""
}

// bill sums what the ledger debited and refunded for a message.
func (f *fixture) bill(ctx context.Context, mid string) (debits, refunds int64) {
	entries, _ := f.st.Ledger(ctx, f.caller.Account.ID, "", 100)
	for _, e := range entries {
		if e.MessageID != mid {
			continue
		}
		switch e.Kind {
		case ledger.Refund:
			refunds += e.Amount
		case ledger.Debit:
			debits -= e.Amount
		}
	}
	return debits, refunds
}

type fixture struct {
	st      *store.Store
	svc     intaketest.Sends
	disp    *Dispatcher
	tracker *tracking.Tracker
	caller  message.Caller
	now     *atomic.Int64 // Unix ms of the fixed clock
}

func (f *fixture) clock() time.Time { return time.UnixMilli(f.now.Load()).UTC() }

func newFixture(t *testing.T, routes fakeRoutes, prices string, accountFallback bool) *fixture {
	t.Helper()
	return newFixtureOn(t, storetest.Open(t, storetest.Migrated(t, "sqlite")), routes, prices, accountFallback)
}

// routesPicker routes both a send (Picker) and its dispatch (Routes).
type routesPicker interface {
	Routes
	intake.Picker
}

// newFixtureOn is newFixture on a given store.
func newFixtureOn(t *testing.T, st *store.Store, routes routesPicker, prices string, accountFallback bool) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{now: &atomic.Int64{}}
	f.now.Store(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC).UnixMilli())
	f.st = st
	acc := domain.Account{ID: "acc_1", Name: "A", Tier: "pro", Currency: "USD", CountryCode: "55", WebhookSecret: "whsec_x",
		WAQualityTier: 1, RCSFallback: accountFallback, Prices: prices, CreatedAt: f.clock()}
	if err := f.st.CreateAccount(ctx, acc); err != nil {
		t.Fatal(err)
	}
	if _, err := creditAccount(ctx, f.st, acc.ID, 100*ledger.Micro, ledger.TopUp, ""); err != nil {
		t.Fatal(err)
	}
	acc, _ = f.st.Account(ctx, acc.ID)
	f.caller = message.Caller{Account: acc, Key: domain.APIKey{ID: "key_1", AccountID: acc.ID, Env: "live"}}
	f.tracker = newTracker(f.st, f.clock, 0)
	t.Cleanup(f.tracker.Close)
	f.svc = intaketest.New(intaketest.Config{Store: f.st, Picker: routes, Now: f.clock, AllowPrivateCallbacks: true})
	t.Cleanup(f.svc.Close)
	f.disp = NewDispatcher(DispatcherConfig{Store: f.st, Routes: routes, Tracker: f.tracker, Owner: "node-1", Now: f.clock,
		Log: quietLog()})
	return f
}

// send accepts a send and returns its message id.
func (f *fixture) send(t *testing.T, d intaketest.Draft) string {
	t.Helper()
	out, err := f.svc.Send(context.Background(), f.caller, d, intake.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out.Receipt.Messages[0].Message.ID
}

// dispatch runs the dispatcher until nothing is due.
func (f *fixture) dispatch(t *testing.T) {
	t.Helper()
	for i := 0; i < 5; i++ {
		n, err := f.disp.RunOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("messages keep coming due")
}

// outcome is how an domain.RCS send ends: its status, the channel and provider
// that carried it, the text the domain.SMS route got, its final price and what was
// refunded of the reserve.
type outcome struct {
	status          domain.Status
	channel         domain.Channel
	provider, body  string
	credits, refund int64
}

func TestRCSCapabilityAndFallback(t *testing.T) {
	const noRCS, rcsOK, unknown = "5511999990003", "5511999990012", "5511999990077"
	twoSegments := strings.Repeat("a", 170)
	cases := []struct {
		name            string
		checks          bool // the domain.RCS provider answers capability questions
		accountFallback bool
		prices          string
		to              string
		fallback        string
		want            outcome
	}{
		{name: "capable device goes as domain.RCS, surplus of the reserve refunded", checks: true, to: rcsOK, fallback: `{"type":"SMS","message":"` + twoSegments + `"}`,
			want: outcome{domain.Sent, domain.RCS, "rcs-co", "rich", 1 * ledger.Micro, 1 * ledger.Micro}},
		{name: "incapable device falls back to the domain.SMS route", checks: true, to: noRCS, fallback: `{"type":"SMS"}`,
			prices: `{"home":{"smsSegment":1000000,"rcsMessage":3000000}}`,
			want:   outcome{domain.Sent, domain.SMS, "sms-co", "rich", 1 * ledger.Micro, 2 * ledger.Micro}},
		{name: "the fallback's own text is sent", checks: true, to: noRCS, fallback: `{"type":"SMS","message":"plain"}`,
			want: outcome{domain.Sent, domain.SMS, "sms-co", "plain", 1 * ledger.Micro, 0}},
		{name: "account-level fallback", checks: true, accountFallback: true, to: noRCS,
			want: outcome{domain.Sent, domain.SMS, "sms-co", "rich", 1 * ledger.Micro, 0}},
		{name: "no fallback: failed and refunded", checks: true, to: noRCS,
			want: outcome{domain.Failed, domain.RCS, "rcs-co", "", 1 * ledger.Micro, 1 * ledger.Micro}},
		{name: "unknown device, provider refuses it: fallback", checks: false, to: unknown, fallback: `{"type":"SMS"}`,
			want: outcome{domain.Sent, domain.SMS, "sms-co", "rich", 1 * ledger.Micro, 0}},
		{name: "unknown device, provider refuses it: no fallback", checks: false, to: unknown,
			want: outcome{domain.Failed, domain.RCS, "rcs-co", "", 1 * ledger.Micro, 1 * ledger.Micro}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := &fakeProvider{name: "rcs-co", capable: map[string]bool{noRCS: false, rcsOK: true}, refuse: map[string]bool{noRCS: true, unknown: true}}
			var rcsP provider.Provider = base
			if c.checks {
				rcsP = checkingProvider{base}
			}
			smsP := &fakeProvider{name: "sms-co"}
			f := newFixture(t, fakeRoutes{domain.RCS: rcsP, domain.SMS: smsP}, c.prices, c.accountFallback)
			ctx := context.Background()
			req := intaketest.Draft{To: c.to, Text: "rich", Type: "RCS", CallbackURL: "http://127.0.0.1:9/hooks"}
			if c.fallback != "" {
				var fb struct {
					Type    string
					Message *string
				}
				if err := json.Unmarshal([]byte(c.fallback), &fb); err != nil {
					t.Fatal(err)
				}
				req.Fallback = &intaketest.FallbackRequest{Type: fb.Type, Message: fb.Message}
			}
			mid := f.send(t, req)
			f.dispatch(t)
			m, err := f.st.Message(ctx, f.caller.Account.ID, f.caller.Key.Env, mid)
			if err != nil {
				t.Fatal(err)
			}
			if m.Status != c.want.status || m.Channel != c.want.channel || m.Provider != c.want.provider || m.Credits != c.want.credits {
				t.Fatalf("message: status %s channel %s provider %s credits %d", m.Status, m.Channel, m.Provider, m.Credits)
			}
			if c.want.status == domain.Failed && m.ErrorCode != domain.CodeRCSNotSupported {
				t.Fatalf("error code %q", m.ErrorCode)
			}
			// The domain.SMS route got the domain.SMS, as plain text.
			var smsBodies []string
			for _, o := range smsP.submitted() {
				if !o.Content.Empty() || o.Channel != domain.SMS {
					t.Fatalf("fallback outbound: %+v", o)
				}
				smsBodies = append(smsBodies, o.Body)
			}
			if c.want.channel == domain.SMS && (len(smsBodies) != 1 || smsBodies[0] != c.want.body) {
				t.Fatalf("domain.SMS route got %q", smsBodies)
			}
			if c.want.channel == domain.RCS && len(smsBodies) != 0 {
				t.Fatalf("domain.SMS route got %q", smsBodies)
			}
			// Webhooks name the provider that carried it.
			evs, err := f.st.EventsForMessage(ctx, f.caller.Account.ID, mid)
			if err != nil || len(evs) == 0 {
				t.Fatalf("events: %v %v", evs, err)
			}
			for _, ev := range evs {
				var p struct{ Provider string }
				_ = json.Unmarshal([]byte(ev.Body), &p)
				if p.Provider != c.want.provider {
					t.Fatalf("webhook provider %q, want %q", p.Provider, c.want.provider)
				}
			}
			// The ledger explains the bill: one debit, then the refund.
			debits, refunds := f.bill(ctx, mid)
			if refunds != c.want.refund || debits-refunds != m.Charged {
				t.Fatalf("debits %d refunds %d charged %d; want refund %d", debits, refunds, m.Charged, c.want.refund)
			}
			// Usage follows the message to the channel that carried it, refunds deducted.
			storetest.CheckUsage(t, f.st, f.caller.Account.ID)
		})
	}
}

func TestCapabilityCachedPerNumber(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil, "", false)
	sim := simulator.New(simulator.Config{Sink: f.tracker, Now: f.clock, Delay: time.Hour})
	routes := fakeRoutes{domain.RCS: sim, domain.SMS: sim}
	f.svc = intaketest.New(intaketest.Config{Store: f.st, Picker: routes, Now: f.clock})
	t.Cleanup(f.svc.Close)
	f.disp = NewDispatcher(DispatcherConfig{Store: f.st, Routes: routes, Tracker: f.tracker, Owner: "node-1", Now: f.clock})
	steps := []struct {
		advance   time.Duration
		to        []string
		wantCalls int64
		wantNums  int64
	}{
		{0, []string{"5511999990003", "5511999990012"}, 1, 2},
		{time.Hour, []string{"5511999990003", "5511999990012"}, 1, 2}, // both cached
		{time.Hour, []string{"5511999990003", "5511999990013"}, 2, 3}, // only the new one asked
		{8 * 24 * time.Hour, []string{"5511999990003"}, 3, 4},         // past the TTL
	}
	for i, s := range steps {
		f.now.Add(s.advance.Milliseconds())
		if _, err := f.svc.Send(ctx, f.caller, intaketest.Draft{Recipients: s.to, Text: "x", Type: "RCS"}, intake.SendOptions{}); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		f.dispatch(t)
		if calls, nums := sim.CapabilityChecks(); calls != s.wantCalls || nums != s.wantNums {
			t.Fatalf("step %d: %d calls about %d numbers, want %d about %d", i, calls, nums, s.wantCalls, s.wantNums)
		}
	}
}
