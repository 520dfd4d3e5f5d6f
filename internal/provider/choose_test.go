package provider

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/costs"
	"github.com/msgsvc/msgsvc/internal/domain"
)

func card(t testing.TB, m map[string]float64) *costs.Table {
	t.Helper()
	c, err := costs.FromMap(m)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func sms(to string, credits int64) *domain.Message {
	return &domain.Message{Env: domain.Live, Channel: domain.SMS, To: to, CountryCode: to[:2], AccountID: "acc_a",
		Segments: 1, Credits: credits}
}

const price = 1_000_000 // one credit

func TestLeastCostTakesTheCheapestWithACost(t *testing.T) {
	a, b, c := named("a"), named("b"), named("c")
	r := NewRouter(nil, []Route{{Name: "uk", Channel: domain.SMS, Strategy: LeastCost, Providers: []Provider{a, b, c}}}).
		WithCosts(map[string]*costs.Table{
			"a": card(t, map[string]float64{"44": 0.05}),
			"b": card(t, map[string]float64{"44": 0.04, "447": 0.03}),
		}, "EUR")
	d := r.Choose(sms("447700900123", price))
	if d.Provider != b || d.Cost != 30_000 || !d.Costed || d.Currency != "EUR" || d.Route != "uk" {
		t.Fatalf("decision %+v", d)
	}
	m := sms("447700900123", price)
	m.Segments = 3
	if d := r.Choose(m); d.Cost != 90_000 {
		t.Fatalf("three segments cost %d", d.Cost)
	}
	if d := r.Choose(sms("442070000000", price)); d.Provider != b || d.Cost != 40_000 {
		t.Fatalf("decision %+v", d)
	}
	ex := r.Explain(sms("447700900123", price))
	if ex.Candidates[2].Eligible || ex.Candidates[2].Reason != "no cost for the destination" || !ex.Candidates[0].Eligible {
		t.Fatalf("candidates %+v", ex.Candidates)
	}
	// The cheapest's circuit opens: the next cheapest.
	for range 5 {
		r.Report("b", false)
	}
	if d := r.Choose(sms("447700900123", price)); d.Provider != a {
		t.Fatalf("with b's circuit open: %v", d.Provider)
	}
	if ex := r.Explain(sms("447700900123", price)); ex.Candidates[1].Circuit != CircuitOpen || ex.Candidates[1].Eligible {
		t.Fatalf("candidates %+v", ex.Candidates)
	}
}

func TestMarginGuard(t *testing.T) {
	a, b := named("a"), named("b")
	cards := map[string]*costs.Table{"a": card(t, map[string]float64{"44": 0.5}), "b": card(t, map[string]float64{"44": 0.9})}
	routes := func(allow bool) *Router {
		return NewRouter(nil, []Route{{Channel: domain.SMS, Providers: []Provider{a, b}, AllowLoss: allow}}).WithCosts(cards, "USD")
	}
	r := routes(false)
	if d := r.Choose(sms("447700900123", 600_000)); d.Provider != a {
		t.Fatalf("a costs less than the price: %v", d.Provider)
	}
	if d := r.Choose(sms("447700900123", 400_000)); d.Provider != nil || d.Route != "route-1" {
		t.Fatalf("every provider above the price: %+v", d)
	}
	ex := r.Explain(sms("447700900123", 400_000))
	if ex.Candidates[0].Reason != "cost above the price (margin guard)" || ex.Candidates[0].Price != 400_000 {
		t.Fatalf("candidates %+v", ex.Candidates)
	}
	if d := routes(true).Choose(sms("447700900123", 400_000)); d.Provider != a {
		t.Fatalf("allowLoss: %v", d.Provider)
	}
	// A destination the cards do not price is not guarded.
	if d := r.Choose(sms("33612345678", 0)); d.Provider != a || d.Costed {
		t.Fatalf("unpriced destination: %+v", d)
	}
}

func TestWeightedSplit(t *testing.T) {
	a, b, c := named("a"), named("b"), named("c")
	r := NewRouter(nil, []Route{{Channel: domain.SMS, Strategy: Weighted, Providers: []Provider{a, b, c}, Weights: []int{70, 30, 0}}})
	got := map[string]int{}
	for range 1000 {
		got[r.Choose(sms("447700900123", price)).Provider.Name()]++
	}
	if got["a"] != 700 || got["b"] != 300 || got["c"] != 0 {
		t.Fatalf("split %v", got)
	}
	// Explaining moves nothing.
	before := r.Explain(sms("447700900123", price)).Provider
	for range 10 {
		if r.Explain(sms("447700900123", price)).Provider != before {
			t.Fatal("explain moved the split")
		}
	}
}

func TestQualityShiftsAndBreaksTiesByCost(t *testing.T) {
	cheap, dear := named("cheap"), named("dear")
	r := NewRouter(nil, []Route{{Channel: domain.SMS, Strategy: Quality, Window: 10, Providers: []Provider{dear, cheap}}}).
		WithCosts(map[string]*costs.Table{"cheap": card(t, map[string]float64{"44": 0.01}), "dear": card(t, map[string]float64{"44": 0.05})}, "USD")
	if d := r.Choose(sms("447700900123", price)); d.Provider != cheap {
		t.Fatalf("no statuses yet: ties by cost, got %v", d.Provider)
	}
	for range 10 {
		r.Observe("cheap", false)
		r.Observe("dear", true)
	}
	if d := r.Choose(sms("447700900123", price)); d.Provider != dear {
		t.Fatalf("cheap fails: %v", d.Provider)
	}
	if ratio, ok := r.DeliveredRatio("cheap", 10); !ok || ratio != 0 {
		t.Fatalf("ratio %v %v", ratio, ok)
	}
	// The window slides: ten deliveries later cheap is as good again.
	for range 10 {
		r.Observe("cheap", true)
	}
	if d := r.Choose(sms("447700900123", price)); d.Provider != cheap {
		t.Fatalf("cheap recovered: %v", d.Provider)
	}
}

func TestRulesMatchInOrder(t *testing.T) {
	at := time.Date(2026, 1, 1, 21, 0, 0, 0, time.UTC)
	p := func(n string) Provider { return named(n) }
	night, _ := ParseHours("20:00-08:00")
	r := NewRouter(nil, []Route{
		{Name: "all", Channel: domain.SMS, Primary: p("all")},
		{Name: "uk", Channel: domain.SMS, Countries: []string{"44"}, Primary: p("uk")},
		{Name: "uk-mobile", Channel: domain.SMS, Prefixes: []string{"447"}, Primary: p("ukm")},
		{Name: "vip", Order: -1, Channel: domain.SMS, Accounts: []string{"acc_vip"}, Primary: p("vip")},
		{Name: "brand", Order: -1, Channel: domain.SMS, Senders: []string{"Acme"}, Primary: p("brand")},
		{Name: "night", Order: -2, Channel: domain.SMS, Prefixes: []string{"33"}, Hours: night, Primary: p("night")},
	}).WithClock(func() time.Time { return at })
	cases := []struct {
		to, account, from, want string
	}{
		{"15550100", "acc_a", "", "all"},
		{"442079460000", "acc_a", "", "uk"},
		{"447700900123", "acc_a", "", "uk-mobile"},
		{"447700900123", "acc_vip", "", "vip"},
		{"15550100", "acc_a", "ACME", "brand"},
		{"33612345678", "acc_vip", "", "night"},
	}
	for _, c := range cases {
		m := sms(c.to, price)
		m.AccountID, m.From = c.account, c.from
		if d := r.Choose(m); d.Route != c.want {
			t.Errorf("%+v: route %q", c, d.Route)
		}
	}
	at = at.Add(12 * time.Hour) // 09:00: the night route is closed
	if d := r.Choose(sms("33612345678", price)); d.Route != "all" {
		t.Errorf("by day: %q", d.Route)
	}
}

func TestParseHours(t *testing.T) {
	h, err := ParseHours("08:00-20:00")
	if err != nil || h.String() != "08:00-20:00" {
		t.Fatal(h, err)
	}
	for _, bad := range []string{"8-20", "08:00", "08:00-08:00", "25:00-01:00"} {
		if _, err := ParseHours(bad); err == nil || !strings.Contains(err.Error(), "UTC window") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if !h.Holds(day.Add(8*time.Hour)) || h.Holds(day.Add(20*time.Hour)) || h.Holds(day.Add(7*time.Hour+59*time.Minute)) {
		t.Fatal("window bounds")
	}
}

func TestTestTrafficStaysOnTheSimulator(t *testing.T) {
	sim := named("simulator")
	r := NewRouter(sim, []Route{{Channel: domain.SMS, Primary: named("a")}})
	m := sms("447700900123", 0)
	m.Env = domain.Test
	if d := r.Choose(m); d.Provider != sim || d.Costed || d.Route != "" {
		t.Fatalf("%+v", d)
	}
}

// BenchmarkDecision is the routing decision of one live SMS: ten rules
// (the matching one has prefixes), three providers with rate cards of
// 100,000 prefixes each, least-cost and quality strategies.
func BenchmarkDecision(b *testing.B) {
	cards := map[string]*costs.Table{}
	provs := []Provider{named("a"), named("b"), named("c")}
	for i, p := range provs {
		t := &costs.Table{}
		for n := range 100_000 {
			if err := t.Add(fmt.Sprintf("%d", 4400000+n*7+i), int64(10_000+n%977)); err != nil {
				b.Fatal(err)
			}
		}
		_ = t.Add("44", 40_000)
		cards[p.Name()] = t
	}
	var routes []Route
	for i := range 8 {
		routes = append(routes, Route{Channel: domain.SMS, Countries: []string{fmt.Sprint(30 + i)}, Providers: provs})
	}
	routes = append(routes,
		Route{Name: "uk", Channel: domain.SMS, Prefixes: []string{"44", "447", "4475"}, Strategy: LeastCost, Providers: provs},
		Route{Name: "rest", Channel: domain.SMS, Strategy: Quality, Providers: provs})
	r := NewRouter(nil, routes).WithCosts(cards, "USD")
	for range 500 {
		r.Observe("a", true)
	}
	for _, s := range []struct {
		name string
		to   string
	}{{"least-cost", "447500123456"}, {"quality", "15550100123"}} {
		b.Run(s.name, func(b *testing.B) {
			m := sms(s.to, price)
			m.CountryCode = s.to[:2]
			for b.Loop() {
				if d := r.Choose(m); d.Provider == nil {
					b.Fatal("no provider")
				}
			}
		})
	}
}

// A provider whose own sender the message may not use (another account
// holds it) is not eligible, whatever the strategy: the next cheapest
// carries the message, and with none left there is no provider (NO_ROUTE).
func TestChooseForSkipsARefusedOwnSender(t *testing.T) {
	a, b := named("a"), named("b")
	r := NewRouter(nil, []Route{{Name: "uk", Channel: domain.SMS, Strategy: LeastCost, Providers: []Provider{a, b}}}).
		WithCosts(map[string]*costs.Table{
			"a": card(t, map[string]float64{"44": 0.01}),
			"b": card(t, map[string]float64{"44": 0.02}),
		}, "EUR")
	r.SetOwnSender("a", "15550001111", false)
	asked := 0
	refuseA := func(sender string) bool { asked++; return sender != "15550001111" }
	if d := r.ChooseFor(sms("447700900123", price), refuseA); d.Provider != b || d.Cost != 20_000 {
		t.Fatalf("a's sender refused: %+v", d)
	}
	if asked != 1 {
		t.Fatalf("usable asked %d times, want once (b has no own sender)", asked)
	}
	named := sms("447700900123", price)
	named.From = "MyShop" // a message naming its sender does not use a's
	if d := r.ChooseFor(named, refuseA); d.Provider != a {
		t.Fatalf("a message naming its sender: %+v", d)
	}
	ex := r.ExplainFor(sms("447700900123", price), refuseA)
	if ex.Candidates[0].Eligible || ex.Candidates[0].Reason != "its own sender is held by another account" || ex.Provider != b {
		t.Fatalf("explained: %+v", ex)
	}
	r.SetOwnSender("b", "15550002222", false)
	if d := r.ChooseFor(sms("447700900123", price), func(string) bool { return false }); d.Provider != nil || d.Route != "uk" {
		t.Fatalf("both refused: %+v", d)
	}
	if d := r.Choose(sms("447700900123", price)); d.Provider != a {
		t.Fatalf("without a check: %+v", d)
	}
}

// With no provider, the decision says why, each reason in its own words:
// the margin guard, no cost for least-cost routing, a held own sender, no
// route, and a mix of reasons provider by provider.
func TestNoProviderSaysWhy(t *testing.T) {
	a, b := named("a"), named("b")
	cards := map[string]*costs.Table{
		"a": card(t, map[string]float64{"44": 2}),
		"b": card(t, map[string]float64{"44": 3, "447": 0.5}),
	}
	r := NewRouter(nil, []Route{
		{Name: "guarded", Channel: domain.SMS, Countries: []string{"44"}, Providers: []Provider{a, b}},
		{Name: "cheapest", Channel: domain.SMS, Countries: []string{"33"}, Strategy: LeastCost, Providers: []Provider{a, b}},
	}).WithCosts(cards, "USD")
	r.SetOwnSender("a", "15550001111", false)
	r.SetOwnSender("b", "15550002222", false)
	cases := []struct {
		name   string
		to     string
		usable func(string) bool
		want   string
	}{
		{"margin guard", "442070000000", nil,
			`every provider of route "guarded" costs more for this destination than the message's price (margin guard)`},
		{"least cost without costs", "33612345678", nil,
			`no provider of route "cheapest" has a cost for this destination (least-cost routing)`},
		{"held senders", "447700900123", func(string) bool { return false },
			`every provider of route "guarded" would send from its own sender, which another account holds; name a sender of yours`},
		{"mixed", "442070000000", func(s string) bool { return s != "15550002222" },
			`no provider of route "guarded" may carry it (a: cost above the price (margin guard); b: its own sender is held by another account)`},
		{"no route", "4915112345678", nil, "no route matches SMS to this destination"},
	}
	for _, c := range cases {
		m := sms(c.to, price)
		if d := r.ChooseFor(m, c.usable); d.Provider != nil || d.Reason != c.want {
			t.Errorf("%s: provider %v, reason %q; want %q", c.name, d.Provider, d.Reason, c.want)
		}
	}
	if d := r.ChooseFor(sms("447700900123", price), nil); d.Provider != b || d.Reason != "" {
		t.Fatalf("a provider chosen: %+v", d)
	}
}
