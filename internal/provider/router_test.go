package provider

import (
	"context"
	"testing"
	"time"

	"msgsvc/internal/domain"
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
