package provider

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// Decision is where a message goes now and what it costs there.
type Decision struct {
	// Provider is nil when no route matches or no provider of the route
	// may carry the message: it fails NO_ROUTE.
	Provider Provider
	// Reason says why Provider is nil (a message's errorMessage under
	// NO_ROUTE); "" when a provider was chosen.
	Reason   string
	Route    string
	Strategy Strategy
	Cost     int64 // for the whole message, micro-units of Currency; valid when Costed
	Costed   bool
	Currency string
	// Candidates, from Explain only: each provider of the route and why it
	// is or is not eligible.
	Candidates []Candidate
}

// Candidate is one provider of a route as a decision saw it.
type Candidate struct {
	Provider   string
	Cost       int64 // micro-units; valid when Costed
	Costed     bool
	Price      int64 // what the account pays for the message, micro-credits
	Circuit    string
	Ratio      float64 // delivered ratio over the route's window; valid when RatioKnown
	RatioKnown bool
	Eligible   bool
	Reason     string
}

// The circuit states a Candidate shows.
const (
	CircuitClosed   = "closed"
	CircuitOpen     = "open"
	CircuitHalfOpen = "half-open"
)

// Choose decides where a message goes now: the route whose match holds and
// the provider its strategy gives among those whose circuit is closed,
// skipping a provider that would cost more than m.Credits unless the route
// allows a loss. When every eligible provider's circuit is open, the first
// by the strategy is taken all the same (its retries decide). It takes a
// half-open breaker's probe and moves a weighted route's split.
func (r *Router) Choose(m *domain.Message) Decision { return r.decide(m, true, true, nil, nil) }

// ChooseFor is Choose where a provider that would send m from its own
// sender (m names none, or the provider sends every message from its own)
// is eligible only when usable(that sender) says so: an account may not
// send from a number another account holds. usable is called outside the
// router's lock, at most once per provider of the route.
func (r *Router) ChooseFor(m *domain.Message, usable func(sender string) bool) Decision {
	return r.decide(m, true, true, nil, usable)
}

// Explain is the decision Choose would take now, with every candidate,
// changing nothing.
func (r *Router) Explain(m *domain.Message) Decision { return r.ExplainFor(m, nil) }

// ExplainFor is the decision ChooseFor would take now, with every
// candidate, changing nothing.
func (r *Router) ExplainFor(m *domain.Message, usable func(sender string) bool) Decision {
	var cs []Candidate
	d := r.decide(m, false, true, &cs, usable)
	d.Candidates = cs
	return d
}

type cand struct {
	refused  bool // its own sender is not the message's to use
	cost     int64
	costed   bool
	closed   bool
	circuit  string
	ratio    float64
	known    bool
	reason   string
	eligible bool
}

func (r *Router) decide(m *domain.Message, handOver, guard bool, explain *[]Candidate, usable func(string) bool) Decision {
	if !m.Env.Live() {
		return Decision{Provider: r.test}
	}
	now := r.now()
	rt := r.find(m, now)
	if rt == nil {
		return Decision{Reason: fmt.Sprintf("no route matches %s to this destination", m.Channel)}
	}
	var refusedStack [8]bool
	refused := r.refused(rt, m, usable, refusedStack[:0])
	units := int64(1)
	if m.Channel == domain.SMS && m.Segments > 1 {
		units = int64(m.Segments)
	}
	var stack [8]cand
	cs := stack[:0]
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, p := range rt.Providers {
		name := p.Name()
		c := cand{refused: refused[i]}
		if t := r.costs[name]; t != nil {
			per, _, ok := t.Lookup(m.To)
			c.cost, c.costed = per*units, ok
		}
		b := r.breaker(name)
		c.closed, c.circuit = b.admit(now, false), b.state(now)
		c.ratio, c.known = r.quality[name][rt.Window].ratio()
		c.reason = rt.ineligible(c, i, m.Credits, guard)
		c.eligible = c.reason == ""
		cs = append(cs, c)
	}
	best := rt.pick(cs, true, handOver)
	if best < 0 {
		best = rt.pick(cs, false, handOver)
	}
	if explain != nil {
		*explain = rt.candidates(cs, m.Credits)
	}
	d := Decision{Route: rt.Name, Strategy: rt.Strategy, Currency: r.currency}
	if best < 0 {
		d.Reason = rt.noProvider(cs)
		return d
	}
	p := rt.Providers[best]
	if handOver {
		r.breaker(p.Name()).admit(now, true)
	}
	d.Provider, d.Cost, d.Costed = p, cs[best].cost, cs[best].costed
	return d
}

// refused tells, for each provider of rt, whether it would send m from
// its own sender and usable refuses that sender; nil usable refuses
// none. It asks outside the router's lock (usable may query the store).
func (r *Router) refused(rt *route, m *domain.Message, usable func(string) bool, out []bool) []bool {
	if n := len(rt.Providers); cap(out) < n {
		out = make([]bool, n)
	} else {
		out = out[:n]
		clear(out)
	}
	if usable == nil {
		return out
	}
	for i, p := range rt.Providers {
		r.mu.Lock()
		own := r.own[p.Name()]
		r.mu.Unlock()
		if own.value == "" || (m.From != "" && !own.only) {
			continue
		}
		out[i] = !usable(own.value)
	}
	return out
}

// ineligible says why a provider may not carry a message on this route,
// "" when it may.
func (rt *route) ineligible(c cand, i int, price int64, guard bool) string {
	switch {
	case c.refused:
		return reasonHeld
	case guard && c.costed && c.cost > price && !rt.AllowLoss:
		return reasonMargin
	case rt.Strategy == LeastCost && !c.costed:
		return reasonNoCost
	case rt.Strategy == Weighted && (i >= len(rt.Weights) || rt.Weights[i] <= 0):
		return reasonNoWeight
	}
	return ""
}

// The reasons a candidate is not eligible, as ineligible gives them.
const (
	reasonHeld        = "its own sender is held by another account"
	reasonMargin      = "cost above the price (margin guard)"
	reasonNoCost      = "no cost for the destination"
	reasonNoWeight    = "no weight"
	reasonOpenCircuit = "circuit open"
)

// noProvider says why no provider of the route may carry a message, from
// its candidates: one sentence when every candidate fails for the same
// reason, else each provider with its own.
func (rt *route) noProvider(cs []cand) string {
	if len(cs) == 0 {
		return fmt.Sprintf("route %q has no provider", rt.Name)
	}
	reasons := make([]string, len(cs))
	for i, c := range cs {
		reasons[i] = c.reason
		if c.eligible && !c.closed {
			reasons[i] = reasonOpenCircuit
		}
	}
	same := true
	for _, r := range reasons[1:] {
		same = same && r == reasons[0]
	}
	if same {
		switch reasons[0] {
		case reasonMargin:
			return fmt.Sprintf("every provider of route %q costs more for this destination than the message's price (margin guard)", rt.Name)
		case reasonNoCost:
			return fmt.Sprintf("no provider of route %q has a cost for this destination (least-cost routing)", rt.Name)
		case reasonHeld:
			return fmt.Sprintf("every provider of route %q would send from its own sender, which another account holds; name a sender of yours", rt.Name)
		case reasonOpenCircuit:
			return fmt.Sprintf("every provider of route %q has its circuit open", rt.Name)
		case reasonNoWeight:
			return fmt.Sprintf("no provider of route %q has a weight", rt.Name)
		}
	}
	parts := make([]string, len(cs))
	for i, r := range reasons {
		parts[i] = rt.Providers[i].Name() + ": " + r
	}
	return fmt.Sprintf("no provider of route %q may carry it (%s)", rt.Name, strings.Join(parts, "; "))
}

// pick is the index of the provider the strategy gives among the eligible
// ones (with a closed circuit when closedOnly), -1 when none is.
func (rt *route) pick(cs []cand, closedOnly, commit bool) int {
	ok := func(c cand) bool { return c.eligible && (c.closed || !closedOnly) }
	if rt.Strategy == Weighted {
		return rt.pickWeighted(cs, ok, commit)
	}
	best := -1
	for i, c := range cs {
		if !ok(c) {
			continue
		}
		if best < 0 || rt.better(c, cs[best]) {
			best = i
		}
	}
	return best
}

// better reports whether a beats b, which comes before it in the route.
func (rt *route) better(a, b cand) bool {
	switch rt.Strategy {
	case LeastCost:
		return a.cost < b.cost
	case Quality:
		ra, rb := ratioOrOne(a), ratioOrOne(b)
		if ra != rb {
			return ra > rb
		}
		return costOrMax(a) < costOrMax(b)
	}
	return false // failover: the first given
}

// ratioOrOne ranks a provider without final statuses yet as perfect, so
// that it gets traffic to be judged by.
func ratioOrOne(c cand) float64 {
	if !c.known {
		return 1
	}
	return c.ratio
}

func costOrMax(c cand) int64 {
	if !c.costed {
		return math.MaxInt64
	}
	return c.cost
}

// pickWeighted is the smooth weighted round robin: over any run of picks
// each provider's share is its weight's, evenly spread. Only a hand-over
// (commit) moves it.
func (rt *route) pickWeighted(cs []cand, ok func(cand) bool, commit bool) int {
	best, total := -1, 0
	var cur [8]int
	run := cur[:0]
	if len(cs) > len(cur) {
		run = make([]int, 0, len(cs))
	}
	for i, c := range cs {
		run = append(run, rt.wrr[i])
		if !ok(c) {
			continue
		}
		run[i] += rt.Weights[i]
		total += rt.Weights[i]
		if best < 0 || run[i] > run[best] {
			best = i
		}
	}
	if best >= 0 && commit {
		run[best] -= total
		copy(rt.wrr, run)
	}
	return best
}

func (rt *route) candidates(cs []cand, price int64) []Candidate {
	out := make([]Candidate, len(cs))
	for i, c := range cs {
		reason := c.reason
		if reason == "" && !c.closed {
			reason = "circuit " + c.circuit
		}
		out[i] = Candidate{Provider: rt.Providers[i].Name(), Cost: c.cost, Costed: c.costed, Price: price,
			Circuit: c.circuit, Ratio: c.ratio, RatioKnown: c.known, Eligible: reason == "", Reason: reason}
	}
	return out
}

// state names a breaker's state for operators.
func (b *breaker) state(now time.Time) string {
	switch {
	case b.openUntil.IsZero():
		return CircuitClosed
	case now.Before(b.openUntil) || b.probing:
		return CircuitOpen
	}
	return CircuitHalfOpen
}
