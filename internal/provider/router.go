package provider

import (
	"slices"
	"sync"
	"time"

	"msgsvc/internal/domain"
)

// Route selects providers for a channel and destination calling codes.
// No Countries matches every destination. Secondary takes the traffic
// while Primary's circuit breaker is open.
type Route struct {
	Channel   domain.Channel
	Countries []string
	Primary   Provider
	Secondary Provider
}

// Router picks the provider for each message: test traffic always goes to
// the simulator, live traffic follows the routes. Each provider has a
// circuit breaker fed by the outcome of its hand-overs (Report): after a
// run of failures the provider is skipped for a cooldown, then one probe
// hand-over decides whether it is back.
type Router struct {
	test   Provider
	routes []Route
	now    func() time.Time

	mu       sync.Mutex
	breakers map[string]*breaker
	// own is each provider's own sender, by provider name. Set before
	// traffic, then only read.
	own map[string]ownSender
}

// ownSender is what a message that names no sender goes out from, and
// whether every message does.
type ownSender struct {
	value string
	only  bool
}

// BreakerSettings tune a provider's circuit breaker.
type BreakerSettings struct {
	Failures int           // consecutive failed hand-overs that open it (default 5)
	Cooldown time.Duration // how long it stays open before a probe (default 30 s)
}

// NewRouter builds a router; test receives all test-key traffic.
func NewRouter(test Provider, routes []Route) *Router {
	return &Router{test: test, routes: routes, now: time.Now, breakers: map[string]*breaker{}, own: map[string]ownSender{}}
}

// SetOwnSender records the sender a provider uses for a message that
// names none (OwnSenderOf its settings; "" when it has none: the platform
// picks, as from a pool), and whether it sends every message from it.
// Call it before traffic starts.
func (r *Router) SetOwnSender(name, sender string, only bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.own[name] = ownSender{sender, only}
}

// WithClock sets the router's clock (tests).
func (r *Router) WithClock(now func() time.Time) *Router {
	r.now = now
	return r
}

// Tune sets a provider's breaker settings.
func (r *Router) Tune(name string, s BreakerSettings) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.breaker(name).settings = s
}

// Pick returns the provider to hand a message to now, or nil when no
// route matches. A route that names the destination's calling code wins
// over a catch-all. A provider whose breaker is half-open gets one probe.
func (r *Router) Pick(env domain.Environment, channel domain.Channel, countryCode string) Provider {
	return r.pick(env, channel, countryCode, true, nil)
}

// PickFor is Pick for a message sent from from ("" for none): a provider
// that would send it from its own sender (the message names none, or the
// provider sends every message from its own) is a candidate only when
// usable(that sender) says so. It returns nil when the route has no
// candidate left. usable is called outside the router's lock, at most
// once per provider of the route.
func (r *Router) PickFor(env domain.Environment, channel domain.Channel, countryCode, from string, usable func(sender string) bool) Provider {
	return r.pick(env, channel, countryCode, true, func(name string) bool {
		r.mu.Lock()
		own := r.own[name]
		r.mu.Unlock()
		return own.value == "" || (from != "" && !own.only) || usable(own.value)
	})
}

// pick chooses among the route's providers that candidate (nil: all)
// accepts by name.
func (r *Router) pick(env domain.Environment, channel domain.Channel, countryCode string, handOver bool, candidate func(name string) bool) Provider {
	if !env.Live() {
		return r.test
	}
	rt := r.route(channel, countryCode)
	if rt == nil {
		return nil
	}
	candidates := make([]Provider, 0, 2)
	for _, p := range []Provider{rt.Primary, rt.Secondary} {
		if p != nil && (candidate == nil || candidate(p.Name())) {
			candidates = append(candidates, p)
		}
	}
	switch len(candidates) {
	case 0:
		return nil
	case 1:
		return candidates[0]
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	for _, p := range candidates {
		if r.breaker(p.Name()).admit(now, handOver) {
			return p
		}
	}
	return candidates[0] // all down: the first one's own retries decide
}

func (r *Router) route(channel domain.Channel, countryCode string) *Route {
	var best *Route
	for i := range r.routes {
		rt := &r.routes[i]
		if rt.Channel != channel {
			continue
		}
		specific := slices.Contains(rt.Countries, countryCode)
		if len(rt.Countries) > 0 && !specific {
			continue
		}
		if best == nil || (len(best.Countries) == 0 && specific) {
			best = rt
		}
	}
	return best
}

// Report tells the router how a hand-over to a provider went: ok when the
// provider took the messages or refused them for reasons of their own
// (a bad number), not ok when it was down, timed out or throttled.
func (r *Router) Report(name string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.breaker(name).record(ok, r.now())
}

// ByName finds a configured provider by name.
func (r *Router) ByName(name string) Provider {
	if r.test != nil && r.test.Name() == name {
		return r.test
	}
	for _, rt := range r.routes {
		if rt.Primary != nil && rt.Primary.Name() == name {
			return rt.Primary
		}
		if rt.Secondary != nil && rt.Secondary.Name() == name {
			return rt.Secondary
		}
	}
	return nil
}

// PickName names the provider a message would go to now, for callers that
// only record it (a send); it never takes a breaker's probe.
func (r *Router) PickName(env domain.Environment, channel domain.Channel, countryCode string) string {
	if p := r.pick(env, channel, countryCode, false, nil); p != nil {
		return p.Name()
	}
	return ""
}

// Routed reports whether live traffic of a channel has any route.
func (r *Router) Routed(channel domain.Channel) bool {
	for _, rt := range r.routes {
		if rt.Channel == channel {
			return true
		}
	}
	return false
}

// BreakerState is what /readyz and metrics show of a provider's breaker.
type BreakerState struct {
	Open     bool      `json:"open"`
	Failures int       `json:"consecutiveFailures"`
	Until    time.Time `json:"openUntil,omitzero"`
}

// Breakers reports every breaker that has seen a hand-over.
func (r *Router) Breakers() map[string]BreakerState {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]BreakerState{}
	now := r.now()
	for name, b := range r.breakers {
		out[name] = BreakerState{Open: b.openUntil.After(now) || b.probing, Failures: b.failures, Until: b.openUntil}
	}
	return out
}

func (r *Router) breaker(name string) *breaker {
	b := r.breakers[name]
	if b == nil {
		b = &breaker{}
		r.breakers[name] = b
	}
	return b
}

// breaker is closed (admits everything), open (admits nothing until
// openUntil) or half-open (admits one probe, then waits for its outcome).
type breaker struct {
	settings  BreakerSettings
	failures  int
	openUntil time.Time
	probing   bool
	probeAt   time.Time
}

func (b *breaker) limits() (int, time.Duration) {
	n, d := b.settings.Failures, b.settings.Cooldown
	if n <= 0 {
		n = 5
	}
	if d <= 0 {
		d = 30 * time.Second
	}
	return n, d
}

// admit says whether the provider may be used now; a hand-over past the
// cooldown becomes the probe.
func (b *breaker) admit(now time.Time, handOver bool) bool {
	_, cooldown := b.limits()
	switch {
	case b.openUntil.IsZero():
		return true
	case now.Before(b.openUntil):
		return false
	case b.probing && now.Sub(b.probeAt) < cooldown:
		return false // a probe is out; wait for its outcome
	}
	if handOver {
		b.probing, b.probeAt = true, now
	}
	return true
}

func (b *breaker) record(ok bool, now time.Time) {
	threshold, cooldown := b.limits()
	if ok {
		b.failures, b.openUntil, b.probing = 0, time.Time{}, false
		return
	}
	b.failures++
	if b.probing || b.failures >= threshold {
		b.openUntil, b.probing = now.Add(cooldown), false
	}
}
