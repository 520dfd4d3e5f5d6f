package provider

import (
	"sync"
	"time"

	"github.com/msgsvc/msgsvc/internal/costs"
	"github.com/msgsvc/msgsvc/internal/domain"
)

// Route selects providers for the messages its match holds for. No
// Countries, Prefixes, Accounts, Senders or Hours matches everything of
// its channel. Providers are tried by Strategy; a route given only
// Primary and Secondary is the failover of the two.
type Route struct {
	Name      string
	Order     int // lower first; among equal orders the longest destination match wins, then the first given
	Channel   domain.Channel
	Countries []string
	Prefixes  []string
	Accounts  []string
	Senders   []string
	Hours     Hours
	Strategy  Strategy
	Providers []Provider
	Weights   []int // Weighted: parallel to Providers
	Window    int   // Quality: final statuses counted per provider (default 500)
	AllowLoss bool  // let a provider cost more than the account pays
	Primary   Provider
	Secondary Provider
}

// Router picks the provider for each message: test traffic always goes to
// the simulator, live traffic follows the routes. Each provider has a
// circuit breaker fed by the outcome of its hand-overs (Report): after a
// run of failures the provider is skipped for a cooldown, then one probe
// hand-over decides whether it is back. It also keeps each provider's
// rate card and its recent delivered ratio (Observe).
type Router struct {
	test     Provider
	routes   []*route
	costs    map[string]*costs.Table
	currency string
	now      func() time.Time

	mu       sync.Mutex
	breakers map[string]*breaker
	quality  map[string]map[int]*ring // provider → window → its last final statuses
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
	r := &Router{test: test, now: time.Now, breakers: map[string]*breaker{}, quality: map[string]map[int]*ring{},
		costs: map[string]*costs.Table{}, own: map[string]ownSender{}}
	for i, rt := range routes {
		c := compile(rt, i)
		r.routes = append(r.routes, c)
		for _, p := range c.Providers {
			r.ring(p.Name(), DefaultWindow) // shown to operators on every route
			r.ring(p.Name(), c.Window)
		}
	}
	return r
}

// WithClock sets the router's clock (tests).
func (r *Router) WithClock(now func() time.Time) *Router {
	r.now = now
	return r
}

// WithCosts gives the providers' rate cards (by provider name) and the
// currency their costs are in.
func (r *Router) WithCosts(cards map[string]*costs.Table, currency string) *Router {
	for name, t := range cards {
		if t != nil {
			r.costs[name] = t
		}
	}
	r.currency = currency
	return r
}

// Currency is the currency of the providers' costs.
func (r *Router) Currency() string { return r.currency }

// SetOwnSender records the sender a provider uses for a message that
// names none (OwnSenderOf its settings; "" when it has none: the platform
// picks, as from a pool), and whether it sends every message from it.
// Call it before traffic starts.
func (r *Router) SetOwnSender(name, sender string, only bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.own[name] = ownSender{sender, only}
}

// OwnSender is the sender a provider's messages that name none go out
// from ("" for an unknown provider or one whose platform picks).
func (r *Router) OwnSender(name string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.own[name].value
}

// Tune sets a provider's breaker settings.
func (r *Router) Tune(name string, s BreakerSettings) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.breaker(name).settings = s
}

// Pick returns the provider to hand a message of a channel to a calling
// code now, or nil when no route matches; the margin guard does not apply
// (nothing is known of the price). A provider whose breaker is half-open
// gets one probe.
func (r *Router) Pick(env domain.Environment, channel domain.Channel, countryCode string) Provider {
	return r.decide(bare(env, channel, countryCode), true, false, nil, nil).Provider
}

func bare(env domain.Environment, channel domain.Channel, countryCode string) *domain.Message {
	return &domain.Message{Env: env, Channel: channel, CountryCode: countryCode, To: countryCode}
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
		for _, p := range rt.Providers {
			if p.Name() == name {
				return p
			}
		}
	}
	return nil
}

// PickName names the provider a message would go to now, for callers that
// only record it (a send); it never takes a breaker's probe.
func (r *Router) PickName(env domain.Environment, channel domain.Channel, countryCode string) string {
	if p := r.decide(bare(env, channel, countryCode), false, false, nil, nil).Provider; p != nil {
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
