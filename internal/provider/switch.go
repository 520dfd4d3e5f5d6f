package provider

import (
	"sync/atomic"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// Switch is the router in use, replaced whole when the configuration is
// reloaded: everything that routes holds the Switch, never a Router.
type Switch struct {
	cur atomic.Pointer[Router]
}

// NewSwitch starts with r.
func NewSwitch(r *Router) *Switch {
	s := &Switch{}
	s.cur.Store(r)
	return s
}

// Router is the router in use.
func (s *Switch) Router() *Router { return s.cur.Load() }

// Swap puts next in use. The breakers and delivered ratios of providers
// that next also routes carry over, so a reload neither forgets that a
// provider is down nor how well it delivers.
func (s *Switch) Swap(next *Router) {
	prev := s.cur.Load()
	next.inherit(prev)
	s.cur.Store(next)
}

func (r *Router) inherit(prev *Router) {
	if prev == nil {
		return
	}
	prev.mu.Lock()
	defer prev.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, b := range prev.breakers {
		if nb, ok := r.breakers[name]; ok {
			settings := nb.settings
			*nb = *b
			nb.settings = settings
		} else {
			cp := *b
			r.breakers[name] = &cp
		}
	}
	for name, byWindow := range r.quality {
		for w, q := range byWindow {
			if old := prev.quality[name][w]; old != nil && len(old.buf) == len(q.buf) {
				q.buf, q.next, q.n, q.delivered = append([]bool(nil), old.buf...), old.next, old.n, old.delivered
			}
		}
	}
}

// The router's methods, on the router in use.

func (s *Switch) Pick(env domain.Environment, channel domain.Channel, countryCode string) Provider {
	return s.Router().Pick(env, channel, countryCode)
}
func (s *Switch) PickName(env domain.Environment, channel domain.Channel, countryCode string) string {
	return s.Router().PickName(env, channel, countryCode)
}
func (s *Switch) Choose(m *domain.Message) Decision  { return s.Router().Choose(m) }
func (s *Switch) Explain(m *domain.Message) Decision { return s.Router().Explain(m) }
func (s *Switch) ChooseFor(m *domain.Message, usable func(string) bool) Decision {
	return s.Router().ChooseFor(m, usable)
}
func (s *Switch) ExplainFor(m *domain.Message, usable func(string) bool) Decision {
	return s.Router().ExplainFor(m, usable)
}
func (s *Switch) SetOwnSender(name, sender string, only bool) {
	s.Router().SetOwnSender(name, sender, only)
}

// OwnSender is the current router's Router.OwnSender ("" before the first
// router is in place).
func (s *Switch) OwnSender(name string) string {
	if r := s.Router(); r != nil {
		return r.OwnSender(name)
	}
	return ""
}
func (s *Switch) Report(name string, ok bool)         { s.Router().Report(name, ok) }
func (s *Switch) Observe(name string, delivered bool) { s.Router().Observe(name, delivered) }
func (s *Switch) ByName(name string) Provider         { return s.Router().ByName(name) }
func (s *Switch) Describe() []RouteInfo               { return s.Router().Describe() }
func (s *Switch) Currency() string                    { return s.Router().Currency() }
func (s *Switch) Breakers() map[string]BreakerState   { return s.Router().Breakers() }
