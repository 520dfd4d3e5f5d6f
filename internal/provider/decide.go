package provider

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/costs"
	"github.com/msgsvc/msgsvc/internal/domain"
)

// Strategy is how a route chooses among its providers.
type Strategy string

// The strategies of a route.
const (
	Failover  Strategy = "failover"   // the first whose circuit is closed, in order
	LeastCost Strategy = "least-cost" // the cheapest that has a cost for the destination
	Weighted  Strategy = "weighted"   // split by weights
	Quality   Strategy = "quality"    // the highest delivered ratio, ties by cost
)

// Strategies lists the strategies a route may name.
var Strategies = []Strategy{Failover, LeastCost, Weighted, Quality}

// DefaultWindow is how many final statuses per provider the quality
// strategy counts when a route names no window.
const DefaultWindow = 500

// Hours is a daily UTC window, From inclusive and To exclusive, in minutes
// of the day; it may wrap past midnight. The zero value is all day.
type Hours struct {
	From, To int
	set      bool
}

// ParseHours reads "08:00-20:00"; "" is all day.
func ParseHours(s string) (Hours, error) {
	if s == "" {
		return Hours{}, nil
	}
	a, b, ok := strings.Cut(s, "-")
	from, err1 := minuteOfDay(a)
	to, err2 := minuteOfDay(b)
	if !ok || err1 != nil || err2 != nil || from == to {
		return Hours{}, fmt.Errorf("%q is not a UTC window such as 08:00-20:00", s)
	}
	return Hours{From: from, To: to, set: true}, nil
}

func minuteOfDay(s string) (int, error) {
	t, err := time.Parse("15:04", strings.TrimSpace(s))
	if err != nil {
		return 0, err
	}
	return t.Hour()*60 + t.Minute(), nil
}

// String is the window as written, "" for all day.
func (h Hours) String() string {
	if !h.set {
		return ""
	}
	return fmt.Sprintf("%02d:%02d-%02d:%02d", h.From/60, h.From%60, h.To/60, h.To%60)
}

// Holds reports whether t falls inside the window.
func (h Hours) Holds(t time.Time) bool {
	if !h.set {
		return true
	}
	t = t.UTC()
	m := t.Hour()*60 + t.Minute()
	if h.From < h.To {
		return m >= h.From && m < h.To
	}
	return m >= h.From || m < h.To
}

// route is a Route ready for matching.
type route struct {
	Route
	index    int
	prefixes *costs.Table // a trie of the destination prefixes (costs unused)
	accounts map[string]bool
	wrr      []int // Weighted: the smooth round robin's running weights
}

func compile(rt Route, i int) *route {
	if len(rt.Providers) == 0 && rt.Primary != nil {
		rt.Providers = []Provider{rt.Primary}
		if rt.Secondary != nil {
			rt.Providers = append(rt.Providers, rt.Secondary)
		}
	}
	if rt.Strategy == "" {
		rt.Strategy = Failover
	}
	if rt.Window <= 0 {
		rt.Window = DefaultWindow
	}
	if rt.Name == "" {
		rt.Name = fmt.Sprintf("route-%d", i+1)
	}
	c := &route{Route: rt, index: i, wrr: make([]int, len(rt.Providers))}
	if len(rt.Prefixes) > 0 {
		c.prefixes = &costs.Table{}
		for _, p := range rt.Prefixes {
			_ = c.prefixes.Add(p, 0) // validated with the configuration
		}
	}
	if len(rt.Accounts) > 0 {
		c.accounts = map[string]bool{}
		for _, a := range rt.Accounts {
			c.accounts[a] = true
		}
	}
	return c
}

// match reports whether the route takes the message at now, and how many
// digits of the destination its countries or prefixes matched.
func (rt *route) match(m *domain.Message, now time.Time) (int, bool) {
	if rt.Channel != m.Channel || !rt.Hours.Holds(now) {
		return 0, false
	}
	if rt.accounts != nil && !rt.accounts[m.AccountID] {
		return 0, false
	}
	if len(rt.Senders) > 0 && !slices.ContainsFunc(rt.Senders, func(s string) bool { return strings.EqualFold(s, m.From) }) {
		return 0, false
	}
	n := 0
	if len(rt.Countries) > 0 {
		if !slices.Contains(rt.Countries, m.CountryCode) {
			return 0, false
		}
		n = len(m.CountryCode)
	}
	if rt.prefixes != nil {
		_, l, ok := rt.prefixes.Lookup(m.To)
		if !ok {
			return 0, false
		}
		n = l
	}
	return n, true
}

// find is the route a message takes: the lowest order, then the longest
// destination match, then the first given.
func (r *Router) find(m *domain.Message, now time.Time) *route {
	var best *route
	bestLen := 0
	for _, rt := range r.routes {
		n, ok := rt.match(m, now)
		if !ok {
			continue
		}
		if best == nil || rt.Order < best.Order || (rt.Order == best.Order && n > bestLen) {
			best, bestLen = rt, n
		}
	}
	return best
}

// ring is a provider's last final statuses, delivered or not.
type ring struct {
	buf       []bool
	next, n   int
	delivered int
}

func (q *ring) add(ok bool) {
	if q.n == len(q.buf) {
		if q.buf[q.next] {
			q.delivered--
		}
	} else {
		q.n++
	}
	q.buf[q.next] = ok
	if ok {
		q.delivered++
	}
	q.next = (q.next + 1) % len(q.buf)
}

// ratio is the delivered share, and false before any final status.
func (q *ring) ratio() (float64, bool) {
	if q == nil || q.n == 0 {
		return 0, false
	}
	return float64(q.delivered) / float64(q.n), true
}

func (r *Router) ring(name string, window int) *ring {
	byWindow := r.quality[name]
	if byWindow == nil {
		byWindow = map[int]*ring{}
		r.quality[name] = byWindow
	}
	q := byWindow[window]
	if q == nil {
		q = &ring{buf: make([]bool, window)}
		byWindow[window] = q
	}
	return q
}

// Observe counts a provider's final status (delivered or not) for the
// routes that choose by quality.
func (r *Router) Observe(name string, delivered bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.quality[name] {
		q.add(delivered)
	}
}

// DeliveredRatio is a provider's delivered share over a window of its last
// final statuses; false before any.
func (r *Router) DeliveredRatio(name string, window int) (float64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.quality[name][window].ratio()
}

// RouteInfo is a configured route as operators see it.
type RouteInfo struct {
	Name      string
	Order     int
	Channel   domain.Channel
	Countries []string
	Prefixes  []string
	Accounts  []string
	Senders   []string
	Hours     string
	Strategy  Strategy
	Window    int // Quality only
	AllowLoss bool
	Providers []ProviderInfo
}

// ProviderInfo is a provider of a route: its weight (Weighted), circuit,
// delivered ratio over the route's window (DefaultWindow unless Quality)
// and how many prefixes its rate card has.
type ProviderInfo struct {
	Name         string
	Weight       int
	Circuit      string
	Ratio        float64
	RatioKnown   bool
	CostPrefixes int
}

// Describe lists the routes in the order given, with their providers'
// state now.
func (r *Router) Describe() []RouteInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	out := make([]RouteInfo, 0, len(r.routes))
	for _, rt := range r.routes {
		ri := RouteInfo{Name: rt.Name, Order: rt.Order, Channel: rt.Channel, Countries: rt.Countries, Prefixes: rt.Prefixes,
			Accounts: rt.Accounts, Senders: rt.Senders, Hours: rt.Hours.String(), Strategy: rt.Strategy, AllowLoss: rt.AllowLoss}
		window := DefaultWindow
		if rt.Strategy == Quality {
			ri.Window, window = rt.Window, rt.Window
		}
		for i, p := range rt.Providers {
			pi := ProviderInfo{Name: p.Name(), Circuit: r.breaker(p.Name()).state(now), CostPrefixes: r.costs[p.Name()].Len()}
			if rt.Strategy == Weighted && i < len(rt.Weights) {
				pi.Weight = rt.Weights[i]
			}
			pi.Ratio, pi.RatioKnown = r.quality[p.Name()][window].ratio()
			ri.Providers = append(ri.Providers, pi)
		}
		out = append(out, ri)
	}
	return out
}
