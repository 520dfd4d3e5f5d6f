package fraud_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/fraud"
)

var t0 = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

func intp(v int) *int           { return &v }
func floatp(v float64) *float64 { return &v }

func account(id string, r domain.FraudRules) domain.Account {
	return domain.Account{ID: id, CountryCode: "55", Fraud: domain.FraudSettings{Rules: &r}, WebhookURL: "https://example.com/hook"}
}

func msgs(acct string, env domain.Environment, cc string, numbers ...string) []domain.Message {
	out := make([]domain.Message, len(numbers))
	for i, n := range numbers {
		out[i] = domain.Message{ID: fmt.Sprintf("msg_%s_%d", n, i), AccountID: acct, Env: env, To: n, CountryCode: cc,
			Status: domain.Sending}
	}
	return out
}

func repeat(n int, number string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = number
	}
	return out
}

// check runs one group of sends and returns the decisions by message id.
func check(t *testing.T, g *fraud.Guard, mem *fraud.Memory, at time.Time, sends ...fraud.Send) map[string]fraud.Decision {
	t.Helper()
	ds, err := g.Check(context.Background(), mem, at, sends)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]fraud.Decision{}
	for _, d := range ds {
		out[sends[d.Send].Messages[d.Message].ID] = d
	}
	return out
}

func TestPerRecipientCapTripsPastItsBoundary(t *testing.T) {
	mem, g := fraud.NewMemory(), fraud.New(fraud.Config{})
	a := account("acc_a", domain.FraudRules{PerRecipientHourly: intp(3)})
	// Three in one group are at the cap; the fourth, in the next group,
	// is past it.
	if got := check(t, g, mem, t0, fraud.Send{Account: a, Messages: msgs("acc_a", domain.Live, "55", repeat(3, "5511999990001")...)}); len(got) != 0 {
		t.Fatalf("3 messages under a cap of 3 were stopped: %v", got)
	}
	got := check(t, g, mem, t0.Add(time.Minute), fraud.Send{Account: a, Messages: msgs("acc_a", domain.Live, "55", "5511999990001")})
	d, ok := got["msg_5511999990001_0"]
	if !ok || d.Rule != domain.RulePerRecipient || d.Count != 4 || d.Cap != 3 || d.Key != "5511999990001" || d.Action != domain.FraudBlock {
		t.Fatalf("4th message: %+v (stopped %v)", d, ok)
	}
	// Another number of the same range is not affected; the next hour
	// starts afresh.
	if got := check(t, g, mem, t0.Add(2*time.Minute), fraud.Send{Account: a, Messages: msgs("acc_a", domain.Live, "55", "5511999990002")}); len(got) != 0 {
		t.Fatalf("another number stopped: %v", got)
	}
	if got := check(t, g, mem, t0.Add(time.Hour), fraud.Send{Account: a, Messages: msgs("acc_a", domain.Live, "55", "5511999990001")}); len(got) != 0 {
		t.Fatalf("next hour stopped: %v", got)
	}
}

func TestPerRangeCapTripsWithinOneGroup(t *testing.T) {
	mem, g := fraud.NewMemory(), fraud.New(fraud.Config{})
	a := account("acc_a", domain.FraudRules{PerRangeHourly: intp(5), Action: domain.FraudHold})
	var numbers []string
	for i := range 7 {
		numbers = append(numbers, fmt.Sprintf("5511999990%03d", i))
	}
	got := check(t, g, mem, t0, fraud.Send{Account: a, Messages: msgs("acc_a", domain.Live, "55", numbers...)})
	if len(got) != 2 {
		t.Fatalf("stopped %d of 7 under a range cap of 5, want 2: %v", len(got), got)
	}
	for i := 5; i < 7; i++ {
		d := got[fmt.Sprintf("msg_%s_%d", numbers[i], i)]
		// Stopped messages do not count: each is the 6th.
		if d.Rule != domain.RulePerRange || d.Key != "5511999990" || d.Count != 6 || d.Cap != 5 || d.Action != domain.FraudHold {
			t.Errorf("message %d: %+v", i, d)
		}
	}
	// Held messages did not use the range: its count stays at the cap.
	if n := mem.Count(fraud.Count{AccountID: "acc_a", Env: domain.Live, Scope: domain.ScopeRange, Key: "5511999990", Hour: t0.Unix() / 3600}); n != 5 {
		t.Errorf("range counted %d, want 5", n)
	}
}

func TestAlertActionLetsMessagesGoAndCountsThem(t *testing.T) {
	mem, g := fraud.NewMemory(), fraud.New(fraud.Config{})
	a := account("acc_a", domain.FraudRules{PerRecipientHourly: intp(1), Action: domain.FraudAlert})
	got := check(t, g, mem, t0, fraud.Send{Account: a, Messages: msgs("acc_a", domain.Live, "55", repeat(3, "5511999990001")...)})
	if len(got) != 2 {
		t.Fatalf("decisions %v, want 2", got)
	}
	if d := got["msg_5511999990001_2"]; d.Count != 3 || d.Action != domain.FraudAlert {
		t.Errorf("third: %+v", d)
	}
	m := msgs("acc_a", domain.Live, "55", "5511999990001")[0]
	fraud.Apply(&m, got["msg_5511999990001_2"].FraudDecision, t0)
	if m.Status != domain.Sending || m.Fraud == nil {
		t.Errorf("alert changed the message: %+v", m)
	}
}

func TestTrustedNumbersBypassAndAreNotCounted(t *testing.T) {
	mem, g := fraud.NewMemory(), fraud.New(fraud.Config{})
	a := account("acc_a", domain.FraudRules{PerRecipientHourly: intp(1), PerRangeHourly: intp(1), BurstFactor: floatp(1),
		Trusted: []string{"5511999990001"}})
	if got := check(t, g, mem, t0, fraud.Send{Account: a, Messages: msgs("acc_a", domain.Live, "55", repeat(20, "5511999990001")...)}); len(got) != 0 {
		t.Fatalf("a trusted number was stopped: %v", got)
	}
	// The range it is in was not used up by it.
	if got := check(t, g, mem, t0, fraud.Send{Account: a, Messages: msgs("acc_a", domain.Live, "55", "5511999990002")}); len(got) != 0 {
		t.Fatalf("its neighbour was stopped: %v", got)
	}
}

func TestBurstMeasuresTheTrailingBaselineWithAFloor(t *testing.T) {
	mem, g := fraud.NewMemory(), fraud.New(fraud.Config{})
	a := account("acc_a", domain.FraudRules{BurstFactor: floatp(2)})
	// A new account: the floor of 5 an hour times 2 lets 10 through to a
	// new country in its first hour, and stops the 11th.
	var numbers []string
	for i := range 11 {
		numbers = append(numbers, fmt.Sprintf("44770090%04d", i*1000)) // 11 different ranges
	}
	got := check(t, g, mem, t0, fraud.Send{Account: a, Messages: msgs("acc_a", domain.Live, "44", numbers...)})
	if len(got) != 1 {
		t.Fatalf("stopped %d, want only the 11th: %v", len(got), got)
	}
	d := got[fmt.Sprintf("msg_%s_10", numbers[10])]
	if d.Rule != domain.RuleBurst || d.Scope != domain.ScopeCountry || d.Key != "44" || d.Count != 11 || d.Cap != 10 ||
		d.Baseline != fraud.MinBaseline || d.Factor != 2 {
		t.Fatalf("decision %+v", d)
	}

	// With a day of 240 messages to 55 (10 an hour), the baseline is 10:
	// 20 go through in an hour, the 21st is a burst.
	mem2, g2 := fraud.NewMemory(), fraud.New(fraud.Config{})
	var past []fraud.Count
	for h := int64(1); h <= 24; h++ {
		past = append(past, fraud.Count{AccountID: "acc_a", Env: domain.Live, Scope: domain.ScopeCountry, Key: "55", Hour: t0.Unix()/3600 - h, N: 10})
	}
	if _, err := mem2.AddFraudCounts(context.Background(), past); err != nil {
		t.Fatal(err)
	}
	numbers = numbers[:0]
	for i := range 21 {
		numbers = append(numbers, fmt.Sprintf("55119%04d0000", i)) // 21 ranges
	}
	got = check(t, g2, mem2, t0, fraud.Send{Account: a, Messages: msgs("acc_a", domain.Live, "55", numbers...)})
	if len(got) != 1 {
		t.Fatalf("stopped %d, want only the 21st: %v", len(got), got)
	}
	if d := got[fmt.Sprintf("msg_%s_20", numbers[20])]; d.Count != 21 || d.Cap != 20 || d.Baseline != 10 {
		t.Fatalf("decision %+v", d)
	}
}

func TestBurstOfARange(t *testing.T) {
	mem, g := fraud.NewMemory(), fraud.New(fraud.Config{})
	a := account("acc_a", domain.FraudRules{BurstFactor: floatp(3)})
	// Sequential numbers of one range, as a pump sends them: the floor
	// 5 × 3 lets 15 through, the 16th is a burst of the range (before the
	// country's, which has the same count).
	var numbers []string
	for i := range 16 {
		numbers = append(numbers, fmt.Sprintf("23480000%03d", i))
	}
	got := check(t, g, mem, t0, fraud.Send{Account: a, Messages: msgs("acc_a", domain.Live, "234", numbers...)})
	if len(got) != 1 {
		t.Fatalf("stopped %d: %v", len(got), got)
	}
	if d := got[fmt.Sprintf("msg_%s_15", numbers[15])]; d.Scope != domain.ScopeRange || d.Key != "23480000" || d.Count != 16 || d.Cap != 15 {
		t.Fatalf("decision %+v", d)
	}
}

func TestTenantsNeverShareCounters(t *testing.T) {
	mem, g := fraud.NewMemory(), fraud.New(fraud.Config{})
	a := account("acc_a", domain.FraudRules{PerRecipientHourly: intp(2)})
	b := account("acc_b", domain.FraudRules{PerRecipientHourly: intp(2)})
	n := "5511999990001"
	got := check(t, g, mem, t0, fraud.Send{Account: a, Messages: msgs("acc_a", domain.Live, "55", repeat(5, n)...)},
		fraud.Send{Account: b, Messages: msgs("acc_b", domain.Live, "55", repeat(2, n)...)})
	if len(got) != 3 {
		t.Fatalf("decisions %d, want the 3 of acc_a past its cap", len(got))
	}
	for id, d := range got {
		if d.Send != 0 {
			t.Errorf("acc_b's %s was stopped by acc_a's traffic", id)
		}
	}
	// acc_a's blocked messages did not count for acc_b either; nor does a
	// test key's traffic count for live.
	if c := mem.Count(fraud.Count{AccountID: "acc_b", Env: domain.Live, Scope: domain.ScopeRecipient, Key: n, Hour: t0.Unix() / 3600}); c != 2 {
		t.Errorf("acc_b counted %d, want 2", c)
	}
	if got := check(t, g, mem, t0, fraud.Send{Account: a, Messages: msgs("acc_a", domain.Test, "55", repeat(2, n)...)}); len(got) != 0 {
		t.Errorf("test traffic stopped by live counts: %v", got)
	}
}

func TestAlertOncePerRuleAndRangeAnHour(t *testing.T) {
	mem, g := fraud.NewMemory(), fraud.New(fraud.Config{})
	a := account("acc_a", domain.FraudRules{PerRecipientHourly: intp(1), PerRangeHourly: intp(3)})
	// Two numbers of one range over the recipient cap: one alert for the
	// rule and range; the range cap is another rule: one more.
	var ms []domain.Message
	ms = append(ms, msgs("acc_a", domain.Live, "55", repeat(3, "5511999990001")...)...)
	ms = append(ms, msgs("acc_a", domain.Live, "55", repeat(3, "5511999990002")...)...)
	check(t, g, mem, t0, fraud.Send{Account: a, Messages: ms})
	// Range at 2 of 3: the 3rd number goes, the 4th and 5th trip the range.
	check(t, g, mem, t0.Add(10*time.Minute), fraud.Send{Account: a, Messages: msgs("acc_a", domain.Live, "55",
		"5511999990003", "5511999990004", "5511999990005")})
	rules := map[string]int{}
	for _, ev := range mem.Events {
		var p map[string]any
		if err := json.Unmarshal([]byte(ev.Body), &p); err != nil {
			t.Fatal(err)
		}
		if ev.Event != domain.EventFraudSuspected || p["event"] != domain.EventFraudSuspected || p["key"] != "5511999990" ||
			p["accountId"] != "acc_a" || ev.URL != "https://example.com/hook" {
			t.Errorf("alert %s %s to %s", ev.Event, ev.Body, ev.URL)
		}
		rules[p["rule"].(string)]++
	}
	if rules[domain.RulePerRecipient] != 1 || rules[domain.RulePerRange] != 1 || len(mem.Events) != 2 {
		t.Fatalf("alerts by rule %v (%d events), want one per rule", rules, len(mem.Events))
	}
	// The next hour alerts again.
	check(t, g, mem, t0.Add(time.Hour), fraud.Send{Account: a, Messages: msgs("acc_a", domain.Live, "55", repeat(2, "5511999990001")...)})
	if len(mem.Events) != 3 {
		t.Fatalf("%d alerts after the next hour's trip, want 3", len(mem.Events))
	}
}

func TestRulesOffCountNothing(t *testing.T) {
	mem, g := fraud.NewMemory(), fraud.New(fraud.Config{})
	a := account("acc_a", domain.FraudRules{Action: domain.FraudBlock, AllowedCountries: []string{"55"}})
	if got := check(t, g, mem, t0, fraud.Send{Account: a, Messages: msgs("acc_a", domain.Live, "55", repeat(50, "5511999990001")...)}); len(got) != 0 {
		t.Fatal(got)
	}
	if c := mem.Count(fraud.Count{AccountID: "acc_a", Env: domain.Live, Scope: domain.ScopeRecipient, Key: "5511999990001", Hour: t0.Unix() / 3600}); c != 0 {
		t.Errorf("counted %d with every rule off", c)
	}
}

func TestApplyBlockChargesNothingAtAnyLevel(t *testing.T) {
	m := domain.Message{Status: domain.Sending, Charged: 2_000_000, Credits: 2_000_000, LeaseOwner: "node", NextAttemptAt: t0,
		Upline: []domain.Level{{AccountID: "acc_parent", Charged: 1_000_000}}}
	fraud.Apply(&m, domain.FraudDecision{Rule: domain.RulePerRange, Action: domain.FraudBlock}, t0)
	if m.Status != domain.Failed || m.ErrorCode != domain.CodeFraudSuspected || m.Charged != 0 || m.Upline[0].Charged != 0 ||
		m.LeaseOwner != "" || !m.NextAttemptAt.IsZero() || m.Fraud == nil {
		t.Fatalf("blocked message %+v", m)
	}
	h := domain.Message{Status: domain.Sending, Charged: 1, LeaseOwner: "node", NextAttemptAt: t0}
	fraud.Apply(&h, domain.FraudDecision{Action: domain.FraudHold}, t0)
	if h.Status != domain.Held || h.Charged != 1 || h.LeaseOwner != "" || !h.NextAttemptAt.IsZero() || !h.HeldAt.Equal(t0) {
		t.Fatalf("held message %+v", h)
	}
}

func TestGeoRefusesEveryRecipientOutside(t *testing.T) {
	path := func(i int) string { return fmt.Sprintf("recipients[%d]", i) }
	rules := domain.FraudRules{AllowedCountries: []string{"55", "1"}}
	if err := fraud.Geo(rules, []string{"55", "1"}, path); err != nil {
		t.Fatal(err)
	}
	err := fraud.Geo(rules, []string{"55", "44", "234"}, path)
	rf, ok := err.(*domain.Refusal)
	if !ok || rf.Code != fraud.CodeDestinationNotAllowed || len(rf.Fields) != 2 || rf.Fields[0].Path != "recipients[1]" ||
		rf.Fields[1].Path != "recipients[2]" {
		t.Fatalf("refusal %#v", err)
	}
	if err := fraud.Geo(domain.FraudRules{}, []string{"44"}, path); err != nil {
		t.Fatalf("no list refused: %v", err)
	}
}

func TestCeilingAndNarrowing(t *testing.T) {
	a := domain.Account{CountryCode: "55", FraudDefaults: domain.FraudRules{AllowedCountries: []string{"1"}}}
	if got := a.FraudRulesOf().AllowedCountries; fmt.Sprint(got) != "[55 1]" {
		t.Errorf("default list %v, want home and the defaults'", got)
	}
	a.Fraud.Narrowed = []string{"55", "44"} // 44 is beyond the ceiling: ignored
	if got := a.FraudRulesOf().AllowedCountries; fmt.Sprint(got) != "[55]" {
		t.Errorf("narrowed list %v", got)
	}
	a.Fraud.Countries = []string{"44", "55"}
	if got := a.FraudRulesOf().AllowedCountries; fmt.Sprint(got) != "[55 44]" {
		t.Errorf("operator's list then narrowed: %v", got)
	}
}

// TestALargeGroupDecidesAsOneMessageGroups: a group of many counters and
// decision rows (past the few a scan finds, which then an index does)
// stops the same messages and sends the same alerts as the same messages
// sent one a group.
func TestALargeGroupDecidesAsOneMessageGroups(t *testing.T) {
	r := domain.FraudRules{PerRecipientHourly: intp(2), PerRangeHourly: intp(100), BurstFactor: floatp(50)}
	var numbers []string
	for rng := range 20 {
		for n := range 2 {
			numbers = append(numbers, fmt.Sprintf("55119%05d%03d", rng, n))
		}
	}
	var all []string
	for range 3 {
		all = append(all, numbers...)
	}
	a := account("acc_a", r)
	big := msgs("acc_a", domain.Live, "55", all...)
	memBig, gOne := fraud.NewMemory(), fraud.New(fraud.Config{})
	gotBig := check(t, fraud.New(fraud.Config{}), memBig, t0, fraud.Send{Account: a, Messages: big})
	mem1 := fraud.NewMemory()
	gotOne := map[string]fraud.Decision{}
	for i := range big {
		for id, d := range check(t, gOne, mem1, t0, fraud.Send{Account: a, Messages: []domain.Message{big[i]}}) {
			gotOne[id] = d
		}
	}
	if len(gotBig) != len(numbers) || len(gotOne) != len(numbers) {
		t.Fatalf("stopped %d in one group, %d one a group; want each number's third, %d", len(gotBig), len(gotOne), len(numbers))
	}
	for id, d := range gotOne {
		b, ok := gotBig[id]
		if !ok || b.Rule != domain.RulePerRecipient || b.FraudDecision != d.FraudDecision {
			t.Fatalf("%s: one group %+v (%v), one a group %+v", id, b, ok, d)
		}
	}
	// One alert per range (the rule's row), in either way of sending.
	for _, mem := range []*fraud.Memory{memBig, mem1} {
		keys := map[string]bool{}
		for _, ev := range mem.Events {
			var p struct{ Key string }
			if err := json.Unmarshal([]byte(ev.Body), &p); err != nil {
				t.Fatal(err)
			}
			keys[p.Key] = true
		}
		if len(mem.Events) != 20 || len(keys) != 20 {
			t.Fatalf("%d alerts over %d ranges, want one for each of 20", len(mem.Events), len(keys))
		}
	}
	if n := memBig.Count(fraud.Count{AccountID: "acc_a", Env: domain.Live, Scope: domain.ScopeCountry, Key: "55", Hour: t0.Unix() / 3600}); n != int64(2*len(numbers)) {
		t.Fatalf("the country counted %d, want the %d that went out", n, 2*len(numbers))
	}
}
