package domain

import "testing"

// What an account pays is three layers: the defaults, its plan, its own
// table; a rate a layer leaves out comes from beneath, and a country a
// layer names starts from the rates it had beneath.
func TestResolvePricesLayers(t *testing.T) {
	plan := `{"home":{"smsSegment":50000},"abroad":{"smsSegment":80000},"countries":{"44":{"smsSegment":40000}}}`
	cases := []struct {
		name, plan, own, home, dest string
		sms, rcs                    int64
	}{
		{"defaults", "", "", "55", "55", micro, micro},
		{"plan home", plan, "", "55", "55", 50000, micro},
		{"plan abroad", plan, "", "55", "1", 80000, micro},
		{"plan country", plan, "", "55", "44", 40000, micro},
		{"own country over the plan's", plan, `{"countries":{"44":{"smsSegment":500000}}}`, "55", "44", 500000, micro},
		{"own home keeps the plan's other rates", plan, `{"home":{"rcsMessage":300000}}`, "55", "55", 50000, 300000},
		{"own abroad leaves the plan's countries", plan, `{"abroad":{"smsSegment":90000}}`, "55", "44", 40000, micro},
		{"own new country starts from the plan's abroad", plan, `{"countries":{"33":{"rcsMessage":7}}}`, "55", "33", 80000, 7},
		{"own home country starts from the plan's home", plan, `{"countries":{"55":{"rcsMessage":7}}}`, "55", "55", 50000, 7},
		{"a table stored whole before plans wins its rates", plan,
			`{"home":{"smsSegment":1000000,"rcsMessage":1000000,"waConversation":2000000,"waInWindow":0},"abroad":{"smsSegment":2000000,"rcsMessage":1000000,"waConversation":2000000,"waInWindow":0}}`,
			"55", "1", 2 * micro, micro},
	}
	for _, c := range cases {
		p, err := ResolvePrices(c.plan, c.own, c.home)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := p.SMS(c.dest, c.home, 1); got != c.sms {
			t.Errorf("%s: SMS %d, want %d", c.name, got, c.sms)
		}
		if got := p.RCS(c.dest, c.home); got != c.rcs {
			t.Errorf("%s: RCS %d, want %d", c.name, got, c.rcs)
		}
	}
	if _, err := ResolvePrices(`{`, "", "1"); err == nil {
		t.Error("a broken plan table resolved")
	}
	a := Account{CountryCode: "55", PlanPrices: plan, Prices: `{"countries":{"44":{"smsSegment":1}}}`}
	if p, err := a.PriceList(); err != nil || p.SMS("44", "55", 1) != 1 || p.SMS("55", "55", 1) != 50000 {
		t.Fatalf("an account built by hand: %+v %v", p, err)
	}
}
