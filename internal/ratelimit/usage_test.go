package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// describeUsage renders a Usage in a stable order for comparison.
func describeUsage(u Usage) string {
	parts := []string{fmt.Sprintf("tier %d/%d@%d", u.Tier.Remaining, u.Tier.Limit, u.Tier.Reset.Unix())}
	types := make([]string, 0, len(u.Types))
	for typ := range u.Types {
		types = append(types, typ)
	}
	sort.Strings(types)
	for _, typ := range types {
		w := u.Types[typ]
		parts = append(parts, fmt.Sprintf("%s %d/%d@%d", typ, w.Remaining, w.Limit, w.Reset.Unix()))
	}
	return strings.Join(parts, " ")
}

func TestUsage(t *testing.T) {
	limits := map[string]int{"send": 5, "status": 0, "media": 60}
	reset := t0.Add(time.Minute)
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clk := newClock(t0.Add(10 * time.Second))
			l := b.new(t, clk.Now)
			for range 3 {
				mustAllow(t, l, Request{Key: "acct_1", TierLimit: 10, Type: "send", TypeLimit: 5})
			}
			mustAllow(t, l, Request{Key: "acct_1", TierLimit: 10, Type: "status"})
			mustAllow(t, l, Request{Key: "acct_2", TierLimit: 10, Type: "media", TypeLimit: 60})

			steps := []struct {
				name string
				at   time.Duration
				key  string
				want string
			}{
				{"counted", 10 * time.Second, "acct_1",
					fmt.Sprintf("tier 6/10@%[1]d media 60/60@%[1]d send 2/5@%[1]d status 0/0@%[1]d", reset.Unix())},
				{"reading counts nothing", 20 * time.Second, "acct_1",
					fmt.Sprintf("tier 6/10@%[1]d media 60/60@%[1]d send 2/5@%[1]d status 0/0@%[1]d", reset.Unix())},
				{"other account", 20 * time.Second, "acct_3",
					fmt.Sprintf("tier 10/10@%[1]d media 60/60@%[1]d send 5/5@%[1]d status 0/0@%[1]d", reset.Unix())},
				{"next window", 60 * time.Second, "acct_1",
					fmt.Sprintf("tier 10/10@%[1]d media 60/60@%[1]d send 5/5@%[1]d status 0/0@%[1]d", reset.Add(time.Minute).Unix())},
			}
			for _, s := range steps {
				clk.Set(t0.Add(s.at))
				u, err := l.(Inspector).Usage(ctx, s.key, 10, limits)
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if got := describeUsage(u); got != s.want {
					t.Errorf("%s:\n got  %s\n want %s", s.name, got, s.want)
				}
			}

			if _, err := l.(Inspector).Usage(ctx, "a{b}", 10, nil); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Usage with braces: err %v, want ErrInvalidKey", err)
			}
			// Unlimited everything needs no counters at all.
			u, err := l.(Inspector).Usage(ctx, "acct_1", 0, map[string]int{"send": -1})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := describeUsage(u), fmt.Sprintf("tier 0/0@%[1]d send 0/0@%[1]d", reset.Add(time.Minute).Unix()); got != want {
				t.Errorf("unlimited: got %s, want %s", got, want)
			}
		})
	}
}

// brokenInspector fails both counting and reading.
type brokenInspector struct{ brokenLimiter }

func (b brokenInspector) Usage(context.Context, string, int, map[string]int) (Usage, error) {
	return Usage{}, b.err
}

func TestFailOpenUsage(t *testing.T) {
	boom := errors.New("backend down")
	limits := map[string]int{"send": 5}
	clk := newClock(t0.Add(15 * time.Second))
	mem := NewMemory(clk.Now)
	mustAllow(t, mem, Request{Key: "acct_1", TierLimit: 10, Type: "send", TypeLimit: 5})
	reset := t0.Add(time.Minute).Unix()
	cases := []struct {
		name    string
		inner   Limiter
		want    string
		reports int
	}{
		{"reads through", mem, fmt.Sprintf("tier 9/10@%[1]d send 4/5@%[1]d", reset), 0},
		{"read fails", brokenInspector{brokenLimiter{boom}}, fmt.Sprintf("tier 10/10@%[1]d send 5/5@%[1]d", reset), 1},
		{"cannot read", brokenLimiter{boom}, fmt.Sprintf("tier 10/10@%[1]d send 5/5@%[1]d", reset), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var reported []error
			l := FailOpen(tc.inner, func(err error) { reported = append(reported, err) })
			u, err := l.(Inspector).Usage(context.Background(), "acct_1", 10, limits)
			if err != nil {
				t.Fatalf("FailOpen Usage returned %v", err)
			}
			got := describeUsage(u)
			if tc.inner != Limiter(mem) {
				// Only the memory backend shares the test clock.
				got = describeUsage(Usage{Tier: withReset(u.Tier, t0.Add(time.Minute)),
					Types: map[string]Window{"send": withReset(u.Types["send"], t0.Add(time.Minute))}})
			}
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			if len(reported) != tc.reports {
				t.Errorf("onError called %d times, want %d", len(reported), tc.reports)
			}
		})
	}
}

func withReset(w Window, reset time.Time) Window {
	w.Reset = reset
	return w
}

func TestUntouchedAndUnused(t *testing.T) {
	now := t0.Add(42 * time.Second)
	reset := t0.Add(time.Minute)
	cases := []struct {
		req  Request
		want Decision
	}{
		{Request{Key: "a", TierLimit: 10, Type: "send", TypeLimit: 3}, want(true, 10, 10, 3, 3, reset, 0)},
		{Request{Key: "a", TierLimit: 10}, want(true, 10, 10, 10, 10, reset, 0)},
		{Request{Key: "a", TierLimit: -5, Type: "send"}, want(true, 0, 0, 0, 0, reset, 0)},
	}
	for _, tc := range cases {
		checkDecision(t, fmt.Sprintf("%+v", tc.req), Untouched(tc.req, now), tc.want)
	}
	u := Unused(now, 30, map[string]int{"send": 60, "media": 0})
	if got, want := describeUsage(u), fmt.Sprintf("tier 30/30@%[1]d media 0/0@%[1]d send 60/60@%[1]d", reset.Unix()); got != want {
		t.Errorf("Unused: got %s, want %s", got, want)
	}
}
