package provider

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

type named string

func (n named) Name() string                                { return string(n) }
func (n named) Submit(context.Context, []Outbound) []Result { return nil }

func TestRouterPicksTheMostSpecificRoute(t *testing.T) {
	sim, a, b, w := named("simulator"), named("a"), named("b"), named("w")
	r := NewRouter(sim, []Route{
		{Channel: domain.SMS, Primary: a},
		{Channel: domain.SMS, Countries: []string{"44", "353"}, Primary: b},
		{Channel: domain.WhatsApp, Primary: w},
	})
	cases := []struct {
		env     domain.Environment
		channel domain.Channel
		cc      string
		want    Provider
	}{
		{domain.Test, domain.SMS, "44", sim},
		{domain.Live, domain.SMS, "44", b},
		{domain.Live, domain.SMS, "353", b},
		{domain.Live, domain.SMS, "1", a},
		{domain.Live, domain.WhatsApp, "1", w},
		{domain.Live, domain.RCS, "1", nil},
	}
	for _, c := range cases {
		if got := r.Pick(c.env, c.channel, c.cc); got != c.want {
			t.Errorf("%s %s +%s: %v, want %v", c.env, c.channel, c.cc, got, c.want)
		}
	}
}

func TestBreakerFailsOverAndProbes(t *testing.T) {
	now := time.Unix(1_000, 0)
	a, b := named("a"), named("b")
	r := NewRouter(nil, []Route{{Channel: domain.SMS, Primary: a, Secondary: b}}).WithClock(func() time.Time { return now })
	r.Tune("a", BreakerSettings{Failures: 3, Cooldown: time.Minute})
	pick := func() Provider { return r.Pick(domain.Live, domain.SMS, "1") }

	for i := 0; i < 2; i++ {
		r.Report("a", false)
	}
	if pick() != a {
		t.Fatal("opened before the threshold")
	}
	r.Report("a", false)
	if got := pick(); got != b {
		t.Fatalf("after 3 failures: %v, want the secondary", got)
	}
	if r.PickName(domain.Live, domain.SMS, "1") != "b" || !r.Breakers()["a"].Open {
		t.Fatal("breaker state not shown")
	}
	now = now.Add(time.Minute)
	if r.PickName(domain.Live, domain.SMS, "1") != "a" {
		t.Fatal("half-open: a send-time pick names the primary")
	}
	if pick() != a {
		t.Fatal("no probe after the cooldown")
	}
	if pick() != b {
		t.Fatal("a second hand-over while the probe is out")
	}
	r.Report("a", false) // the probe failed: open again
	if pick() != b {
		t.Fatal("failed probe did not reopen")
	}
	now = now.Add(time.Minute)
	if pick() != a {
		t.Fatal("no second probe")
	}
	r.Report("a", true)
	for i := 0; i < 2; i++ {
		if pick() != a {
			t.Fatal("successful probe did not close the breaker")
		}
	}
	if r.Breakers()["a"].Open {
		t.Fatal("the breaker still shows open")
	}
}

func TestBothDownStaysOnPrimary(t *testing.T) {
	a, b := named("a"), named("b")
	r := NewRouter(nil, []Route{{Channel: domain.SMS, Primary: a, Secondary: b}})
	for i := 0; i < 5; i++ {
		r.Report("a", false)
		r.Report("b", false)
	}
	if got := r.Pick(domain.Live, domain.SMS, "1"); got != a {
		t.Fatalf("both down: %v, want the primary", got)
	}
}

// A message that names no sender goes out from its provider's own sender
// (on a provider that sends everything from it, every message does):
// ChooseFor skips a provider whose own sender the caller may not use, keeps
// one without an own sender, and leaves the breakers to choose among what
// is left.
func TestChooseForSkipsProvidersWhoseSenderIsRefused(t *testing.T) {
	now := time.Unix(1_000, 0)
	sim, a, b, c, w := named("simulator"), named("a"), named("b"), named("c"), named("w")
	r := NewRouter(sim, []Route{
		{Channel: domain.SMS, Primary: a, Secondary: b},
		{Channel: domain.SMS, Countries: []string{"47"}, Primary: a},
		{Channel: domain.SMS, Countries: []string{"48"}, Primary: a, Secondary: c},
		{Channel: domain.WhatsApp, Primary: w},
	}).WithClock(func() time.Time { return now })
	r.SetOwnSender("a", "15550001111", false)
	r.SetOwnSender("b", "MyShop", false)
	r.SetOwnSender("w", "15550003333", true)
	pickFor := func(env domain.Environment, channel domain.Channel, cc, from string, usable func(string) bool) Provider {
		m := bare(env, channel, cc)
		m.From = from
		return r.ChooseFor(m, usable).Provider
	}
	var asked []string
	refuse := func(refused ...string) func(string) bool {
		return func(s string) bool {
			asked = append(asked, s)
			return !slices.Contains(refused, s)
		}
	}
	cases := []struct {
		name      string
		env       domain.Environment
		channel   domain.Channel
		cc, from  string
		refused   []string
		want      Provider
		wantAsked int
	}{
		{"both usable", domain.Live, domain.SMS, "1", "", nil, a, 2},
		{"primary's sender refused", domain.Live, domain.SMS, "1", "", []string{"15550001111"}, b, 2},
		{"both refused", domain.Live, domain.SMS, "1", "", []string{"15550001111", "MyShop"}, nil, 2},
		{"no secondary", domain.Live, domain.SMS, "47", "", []string{"15550001111"}, nil, 1},
		{"a secondary without an own sender", domain.Live, domain.SMS, "48", "", []string{"15550001111"}, c, 1},
		{"the message names its sender", domain.Live, domain.SMS, "47", "Other", []string{"15550001111"}, a, 0},
		{"a provider that sends only from its own", domain.Live, domain.WhatsApp, "1", "15550004444", []string{"15550003333"}, nil, 1},
		{"test traffic", domain.Test, domain.SMS, "47", "", []string{"15550001111"}, sim, 0},
	}
	for _, tc := range cases {
		asked = nil
		if got := pickFor(tc.env, tc.channel, tc.cc, tc.from, refuse(tc.refused...)); got != tc.want || len(asked) != tc.wantAsked {
			t.Errorf("%s: %v after asking about %q, want %v after %d questions", tc.name, got, asked, tc.want, tc.wantAsked)
		}
	}

	// The primary's breaker is open: the secondary takes the traffic, but
	// not when its own sender is refused; then the primary's own retries
	// decide, as when both are down.
	r.Tune("a", BreakerSettings{Failures: 1, Cooldown: time.Minute})
	r.Report("a", false)
	if got := pickFor(domain.Live, domain.SMS, "1", "", refuse()); got != b {
		t.Errorf("primary down: %v, want the secondary", got)
	}
	if got := pickFor(domain.Live, domain.SMS, "1", "", refuse("MyShop")); got != a {
		t.Errorf("primary down, secondary's sender refused: %v, want the primary", got)
	}
	r.Tune("b", BreakerSettings{Failures: 1, Cooldown: time.Minute})
	r.Report("b", false)
	if got := pickFor(domain.Live, domain.SMS, "1", "", refuse("15550001111")); got != b {
		t.Errorf("only the secondary usable, and down: %v, want it (its own retries decide)", got)
	}
}
