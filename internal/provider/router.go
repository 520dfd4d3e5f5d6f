package provider

import (
	"msgsvc/internal/domain"
	"sync"
)

// Route selects providers for a channel and destination calling code.
// CountryCode "" matches every destination. Secondary is used while the
// primary is marked down.
type Route struct {
	Channel     domain.Channel
	CountryCode string
	Primary     Provider
	Secondary   Provider
}

// Router picks the provider for each message: test traffic always goes to
// the simulator, live traffic follows the routes.
type Router struct {
	test   Provider
	routes []Route

	mu   sync.Mutex
	down map[string]bool
}

// NewRouter builds a router; test receives all test-key traffic.
func NewRouter(test Provider, routes []Route) *Router {
	return &Router{test: test, routes: routes, down: map[string]bool{}}
}

// Pick returns the provider for a message, or nil when no route matches.
// A route for the exact calling code wins over a catch-all one.
func (r *Router) Pick(env domain.Environment, channel domain.Channel, countryCode string) Provider {
	if !env.Live() {
		return r.test
	}
	var best *Route
	for i := range r.routes {
		rt := &r.routes[i]
		if rt.Channel != channel || (rt.CountryCode != "" && rt.CountryCode != countryCode) {
			continue
		}
		if best == nil || (best.CountryCode == "" && rt.CountryCode != "") {
			best = rt
		}
	}
	if best == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down[best.Primary.Name()] && best.Secondary != nil {
		return best.Secondary
	}
	return best.Primary
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

// SetDown marks a provider as unavailable (or available again), so routes
// fail over to their secondary.
func (r *Router) SetDown(name string, down bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down[name] = down
}

// PickName is Pick for callers that only record the provider's name.
func (r *Router) PickName(env domain.Environment, channel domain.Channel, countryCode string) string {
	if p := r.Pick(env, channel, countryCode); p != nil {
		return p.Name()
	}
	return ""
}
