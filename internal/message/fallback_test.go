package message

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"msgsvc/internal/ledger"
	"msgsvc/internal/provider"
	"msgsvc/internal/provider/simulator"
	"msgsvc/internal/store"
	"msgsvc/internal/store/storetest"
)

// fakeProvider accepts everything; as an RCS provider it may answer
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
			out[i].Err = &provider.Error{Code: CodeRCSNotSupported, Message: "no RCS on this phone"}
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

type fakeRoutes map[string]provider.Provider // by channel

func (r fakeRoutes) Pick(_, channel, _ string) provider.Provider { return r[channel] }
func (r fakeRoutes) ByName(name string) provider.Provider {
	for _, p := range r {
		if p != nil && p.Name() == name {
			return p
		}
	}
	return nil
}
func (r fakeRoutes) PickName(env, channel, cc string) string {
	if p := r.Pick(env, channel, cc); p != nil {
		return p.Name()
	}
	return ""
}

type fixture struct {
	st      *store.Store
	svc     *Service
	disp    *Dispatcher
	tracker *Tracker
	caller  Caller
	now     *atomic.Int64 // Unix ms of the fixed clock
}

func (f *fixture) clock() time.Time { return time.UnixMilli(f.now.Load()).UTC() }

func newFixture(t *testing.T, routes fakeRoutes, prices string, accountFallback bool) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{now: &atomic.Int64{}}
	f.now.Store(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC).UnixMilli())
	f.st = storetest.Open(t, storetest.DSN(t, "sqlite"))
	acc := store.Account{ID: "acc_1", Name: "A", Tier: "pro", Currency: "USD", CountryCode: "55", WebhookSecret: "whsec_x",
		WAQualityTier: 1, RCSFallback: accountFallback, Prices: prices, CreatedAt: f.clock()}
	if err := f.st.CreateAccount(ctx, acc); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.AddCredits(ctx, acc.ID, 100*ledger.Micro, store.LedgerTopUp, ""); err != nil {
		t.Fatal(err)
	}
	acc, _ = f.st.Account(ctx, acc.ID)
	f.caller = Caller{Account: acc, Key: store.APIKey{ID: "key_1", AccountID: acc.ID, Env: "live"}}
	f.tracker = NewTracker(TrackerConfig{Store: f.st, Now: f.clock})
	t.Cleanup(f.tracker.Close)
	f.svc = NewService(Config{Store: f.st, Picker: routes, Now: f.clock, AllowPrivateCallbacks: true})
	t.Cleanup(f.svc.Close)
	f.disp = NewDispatcher(DispatcherConfig{Store: f.st, Routes: routes, Tracker: f.tracker, Owner: "node-1", Now: f.clock,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return f
}

// send accepts a send and returns its message id.
func (f *fixture) send(t *testing.T, req SendRequest) string {
	t.Helper()
	res, err := f.svc.Send(context.Background(), f.caller, req, SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct{ MessageID string } `json:"messages"`
	}
	if err := json.Unmarshal(res.Body, &body); err != nil {
		t.Fatal(err)
	}
	return body.Messages[0].MessageID
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

// outcome is how an RCS send ends: its status, the channel and provider
// that carried it, the text the SMS route got, its final price and what was
// refunded of the reserve.
type outcome struct {
	status, channel, provider, body string
	credits, refund                 int64
}

func TestRCSCapabilityAndFallback(t *testing.T) {
	const noRCS, rcsOK, unknown = "5511999990003", "5511999990012", "5511999990077"
	twoSegments := strings.Repeat("a", 170)
	cases := []struct {
		name            string
		checks          bool // the RCS provider answers capability questions
		accountFallback bool
		prices          string
		to              string
		fallback        string
		want            outcome
	}{
		{name: "capable device goes as RCS, surplus of the reserve refunded", checks: true, to: rcsOK, fallback: `{"type":"SMS","message":"` + twoSegments + `"}`,
			want: outcome{Sent, RCS, "rcs-co", "rich", 1 * ledger.Micro, 1 * ledger.Micro}},
		{name: "incapable device falls back to the SMS route", checks: true, to: noRCS, fallback: `{"type":"SMS"}`,
			prices: `{"home":{"smsSegment":1000000,"rcsMessage":3000000}}`,
			want:   outcome{Sent, SMS, "sms-co", "rich", 1 * ledger.Micro, 2 * ledger.Micro}},
		{name: "the fallback's own text is sent", checks: true, to: noRCS, fallback: `{"type":"SMS","message":"plain"}`,
			want: outcome{Sent, SMS, "sms-co", "plain", 1 * ledger.Micro, 0}},
		{name: "account-level fallback", checks: true, accountFallback: true, to: noRCS,
			want: outcome{Sent, SMS, "sms-co", "rich", 1 * ledger.Micro, 0}},
		{name: "no fallback: failed and refunded", checks: true, to: noRCS,
			want: outcome{Failed, RCS, "rcs-co", "", 1 * ledger.Micro, 1 * ledger.Micro}},
		{name: "unknown device, provider refuses it: fallback", checks: false, to: unknown, fallback: `{"type":"SMS"}`,
			want: outcome{Sent, SMS, "sms-co", "rich", 1 * ledger.Micro, 0}},
		{name: "unknown device, provider refuses it: no fallback", checks: false, to: unknown,
			want: outcome{Failed, RCS, "rcs-co", "", 1 * ledger.Micro, 1 * ledger.Micro}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := &fakeProvider{name: "rcs-co", capable: map[string]bool{noRCS: false, rcsOK: true}, refuse: map[string]bool{noRCS: true, unknown: true}}
			var rcsP provider.Provider = base
			if c.checks {
				rcsP = checkingProvider{base}
			}
			smsP := &fakeProvider{name: "sms-co"}
			f := newFixture(t, fakeRoutes{RCS: rcsP, SMS: smsP}, c.prices, c.accountFallback)
			ctx := context.Background()
			req := SendRequest{To: c.to, Message: "rich", Type: "RCS", CallbackURL: "http://127.0.0.1:9/hooks"}
			if c.fallback != "" {
				req.Fallback = json.RawMessage(c.fallback)
			}
			mid := f.send(t, req)
			f.dispatch(t)
			m, err := f.st.Message(ctx, f.caller.Account.ID, mid)
			if err != nil {
				t.Fatal(err)
			}
			if m.Status != c.want.status || m.Channel != c.want.channel || m.Provider != c.want.provider || m.Credits != c.want.credits {
				t.Fatalf("message: status %s channel %s provider %s credits %d", m.Status, m.Channel, m.Provider, m.Credits)
			}
			if c.want.status == Failed && m.ErrorCode != CodeRCSNotSupported {
				t.Fatalf("error code %q", m.ErrorCode)
			}
			// The SMS route got the SMS, as plain text.
			var smsBodies []string
			for _, o := range smsP.submitted() {
				if o.Content != "" || o.Channel != SMS {
					t.Fatalf("fallback outbound: %+v", o)
				}
				smsBodies = append(smsBodies, o.Body)
			}
			if c.want.channel == SMS && (len(smsBodies) != 1 || smsBodies[0] != c.want.body) {
				t.Fatalf("SMS route got %q", smsBodies)
			}
			if c.want.channel == RCS && len(smsBodies) != 0 {
				t.Fatalf("SMS route got %q", smsBodies)
			}
			// Webhooks name the provider that carried it.
			evs, err := f.st.EventsForMessage(ctx, f.caller.Account.ID, mid)
			if err != nil || len(evs) == 0 {
				t.Fatalf("events: %v %v", evs, err)
			}
			for _, ev := range evs {
				var p statusPayload
				_ = json.Unmarshal([]byte(ev.Body), &p)
				if p.Provider != c.want.provider {
					t.Fatalf("webhook provider %q, want %q", p.Provider, c.want.provider)
				}
			}
			// The ledger explains the bill: one debit, then the refund.
			entries, _ := f.st.Ledger(ctx, f.caller.Account.ID, "", 100)
			var refunds, debits int64
			for _, e := range entries {
				if e.MessageID != mid {
					continue
				}
				switch e.Kind {
				case store.LedgerRefund:
					refunds += e.Amount
				case store.LedgerDebit:
					debits -= e.Amount
				}
			}
			if refunds != c.want.refund || debits-refunds != m.Charged {
				t.Fatalf("debits %d refunds %d charged %d; want refund %d", debits, refunds, m.Charged, c.want.refund)
			}
		})
	}
}

func TestCapabilityCachedPerNumber(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil, "", false)
	sim := simulator.New(simulator.Config{Sink: f.tracker, Now: f.clock, Delay: time.Hour})
	routes := fakeRoutes{RCS: sim, SMS: sim}
	f.svc = NewService(Config{Store: f.st, Picker: routes, Now: f.clock})
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
		res, err := f.svc.Send(ctx, f.caller, SendRequest{Recipients: s.to, Message: "x", Type: "RCS"}, SendOptions{})
		if err != nil || res.Status != 202 {
			t.Fatalf("step %d: %v %s", i, err, res.Body)
		}
		f.dispatch(t)
		if calls, nums := sim.CapabilityChecks(); calls != s.wantCalls || nums != s.wantNums {
			t.Fatalf("step %d: %d calls about %d numbers, want %d about %d", i, calls, nums, s.wantCalls, s.wantNums)
		}
	}
}

func TestTransitionFallbackAndSettle(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	plan := `{"fallback":{"type":"SMS","message":"t","segments":2,"encoding":"GSM-7","smsCredits":2000000,"rcsCredits":1000000}}`
	rcsMsg := func(charged int64, content string) store.Message {
		return store.Message{ID: "m", Type: RCS, Channel: RCS, Status: Sending, Credits: 2_000000, Charged: charged,
			Content: content, LeaseOwner: "n1", NextAttemptAt: at}
	}
	cases := []struct {
		name    string
		m       store.Message
		r       Report
		status  string
		channel string
		credits int64
		refund  int64
	}{
		{"fallback moves to SMS and queues again", rcsMsg(2_000000, plan), Report{Kind: Fallback, Provider: "sms", LeaseOwner: "n1"}, Sending, SMS, 2_000000, 0},
		{"fallback by another lease holder is ignored", rcsMsg(2_000000, plan), Report{Kind: Fallback, Provider: "sms", LeaseOwner: "n2"}, Sending, RCS, 2_000000, 0},
		{"fallback without a plan fails", rcsMsg(2_000000, ""), Report{Kind: Fallback, LeaseOwner: "n1"}, Failed, RCS, 2_000000, 2_000000},
		{"accepted as RCS settles to the RCS price", rcsMsg(2_000000, plan), Report{Kind: Accepted, Provider: "rcs", LeaseOwner: "n1"}, Sent, RCS, 1_000000, 1_000000},
		{"a delivery report overtaking the answer settles too", rcsMsg(2_000000, plan), Report{Kind: Progress, Status: Delivered}, Delivered, RCS, 1_000000, 1_000000},
		{"test keys are never refunded", rcsMsg(0, plan), Report{Kind: Accepted, LeaseOwner: "n1"}, Sent, RCS, 1_000000, 0},
		{"no plan, nothing to settle", rcsMsg(2_000000, ""), Report{Kind: Accepted, LeaseOwner: "n1"}, Sent, RCS, 2_000000, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.m
			_, money := transition(&m, c.r, at)
			if m.Status != c.status || m.Channel != c.channel || m.Credits != c.credits || money.amount != c.refund {
				t.Fatalf("status %s channel %s credits %d refund %d", m.Status, m.Channel, m.Credits, money.amount)
			}
			if c.channel == SMS && (m.Segments != 2 || m.Encoding != "GSM-7" || m.Provider != "sms" || !m.NextAttemptAt.Equal(at) || m.LeaseOwner != "" || !money.requeued) {
				t.Fatalf("fallback message: %+v %+v", m, money)
			}
		})
	}
}
