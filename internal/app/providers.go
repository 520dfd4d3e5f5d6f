package app

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgsvc/msgsvc/internal/api"
	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/costs"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/builtin"
	"github.com/msgsvc/msgsvc/internal/provider/simulator"
	"github.com/msgsvc/msgsvc/internal/routing"
)

// providerTypes are the adapter types this build runs (package builtin
// lists them).
func providerTypes() (*provider.Registry, error) { return builtin.Registry() }

// adapter is a configured provider as the server runs it.
type adapter struct {
	p      provider.Adapter
	start  func(ctx context.Context) error
	close  func(ctx context.Context) error
	health func() provider.Health
	// kind is the provider type, whose webhook routes the first adapter
	// of each type receives.
	kind string
	// spec is the configuration it was built from, and metrics its
	// collectors: a reload keeps an adapter whose spec is unchanged.
	spec    routing.Provider
	metrics *adapterMetrics
}

func newAdapter(kind string, a provider.Adapter) adapter {
	return adapter{p: a, start: a.Start, close: a.Stop, health: a.Health, kind: kind}
}

// providerWebhooks are the webhook routes of every registered type, each
// call received by the first provider of its type in the configuration in
// use (one path per type), so that one rebuilt by a reload gets them.
func (s *Server) providerWebhooks() api.ProviderWebhooks {
	types := builtin.Types()
	hooked := map[string]bool{}
	for _, t := range types {
		hooked[t.Name] = len(t.Webhooks) > 0
	}
	seen := map[string]bool{}
	for _, a := range s.adapters {
		if seen[a.kind] && hooked[a.kind] {
			s.log.Warn("several providers of one type: the first configured receives the platform's webhook", "type", a.kind, "ignored", a.p.Name())
		}
		seen[a.kind] = true
	}
	return typeWebhooks{s: s, types: types}
}

type typeWebhooks struct {
	s     *Server
	types []provider.Type
}

func (h typeWebhooks) Types() []provider.Type { return h.types }

func (h typeWebhooks) Receiver(kind string) provider.Adapter {
	h.s.adaptersMu.Lock()
	defer h.s.adaptersMu.Unlock()
	for _, a := range h.s.adapters {
		if a.kind == kind {
			return a.p
		}
	}
	return nil
}

// adapterQuerier asks the provider of that name in the configuration in
// use about overdue receipts; a provider a reload removed answers nothing.
type adapterQuerier struct {
	s    *Server
	name string
}

func (q adapterQuerier) Query(ctx context.Context, qs []provider.QueryRef) ([]provider.Status, error) {
	q.s.adaptersMu.Lock()
	var target provider.Querier
	for _, a := range q.s.adapters {
		if a.p.Name() == q.name {
			target = provider.CapabilitiesOf(a.p).Querier
		}
	}
	q.s.adaptersMu.Unlock()
	if target == nil {
		return nil, nil
	}
	return target.Query(ctx, qs)
}

// providers reads the provider configuration (the --config file, then the
// environment shortcuts of every type), builds each adapter and the
// router. In dev, live traffic of a channel without a configured route goes
// to the simulator; in serve it fails with NO_ROUTE.
func (s *Server) providers(sim *simulator.Simulator, sink provider.Sink, reg *prometheus.Registry) (*provider.Router, error) {
	rc, types, err := s.loadRouting()
	if err != nil {
		return nil, err
	}
	s.deps = provider.Deps{Sink: &qualitySink{Sink: sink, routes: s.routing}, Metrics: reg, Files: s.media, Cache: s.store,
		Now: s.now, Log: s.log, Version: Version}
	built := map[string]provider.Provider{}
	for _, spec := range rc.Providers {
		a, err := s.buildAdapter(types, spec)
		if err != nil {
			return nil, err
		}
		built[spec.Name] = a.p
		s.adapters = append(s.adapters, a)
	}
	s.reloads.running = rc
	for _, ch := range rc.Unrouted() {
		if !s.cfg.Dev {
			s.log.Warn("no route for live messages of this channel: they fail with NO_ROUTE and are refunded", "channel", ch)
		}
	}
	return s.buildRouter(rc, built, sim), nil
}

// loadRouting reads and checks the provider configuration.
func (s *Server) loadRouting() (routing.Config, *provider.Registry, error) {
	types, err := providerTypes()
	if err != nil {
		return routing.Config{}, nil, err
	}
	var rc routing.Config
	if s.cfg.Config != "" {
		if rc, err = routing.Load(s.cfg.Config, os.Getenv, types); err != nil {
			return routing.Config{}, nil, err
		}
		if err := rc.CheckAccounts(s.cfg.Config, bootstrap.AccountExists(context.Background(), s.store)); err != nil {
			return routing.Config{}, nil, err
		}
	}
	if rc, err = routing.FromEnv(rc, s.getenv, types); err != nil {
		return routing.Config{}, nil, err
	}
	return rc, types, nil
}

// buildAdapter builds one configured provider; its metrics are registered
// so that a reload can take them back.
func (s *Server) buildAdapter(types *provider.Registry, spec routing.Provider) (adapter, error) {
	t, _ := types.Type(spec.Type) // routing read only registered types
	deps := s.deps
	metrics := &adapterMetrics{reg: deps.Metrics}
	if deps.Metrics != nil {
		deps.Metrics = metrics
	}
	a, err := t.Build(context.Background(), spec.Name, spec.Settings, deps)
	if err != nil {
		metrics.unregister()
		return adapter{}, fmt.Errorf("provider %s: %w", spec.Name, err)
	}
	out := newAdapter(spec.Type, a)
	out.spec, out.metrics = spec, metrics
	return out, nil
}

// buildRouter makes the router of a configuration over built adapters.
func (s *Server) buildRouter(rc routing.Config, built map[string]provider.Provider, sim provider.Provider) *provider.Router {
	var routes []provider.Route
	for _, r := range rc.Routes {
		routes = append(routes, runRoute(r, built))
	}
	if s.cfg.Dev {
		for _, ch := range rc.Unrouted() {
			routes = append(routes, provider.Route{Channel: ch, Primary: sim})
		}
	}
	cards := map[string]*costs.Table{}
	for _, spec := range rc.Providers {
		cards[spec.Name] = spec.Costs
	}
	router := provider.NewRouter(sim, routes).WithClock(s.now).WithCosts(cards, cmp.Or(rc.Currency, "USD"))
	for _, spec := range rc.Providers {
		router.Tune(spec.Name, provider.BreakerSettings{Failures: spec.Breaker.Failures, Cooldown: spec.Breaker.Cooldown})
		own, only := provider.OwnSenderOf(spec.Settings)
		router.SetOwnSender(spec.Name, own, only)
	}
	return router
}

// qualitySink counts each provider's final statuses for the routes that
// choose by delivered ratio, on their way to the tracker.
type qualitySink struct {
	provider.Sink
	routes *provider.Switch
}

// Expect passes a provider's early word on to the tracker (see
// provider.Expecter).
func (q *qualitySink) Expect(name, ref string) {
	if e, ok := q.Sink.(provider.Expecter); ok {
		e.Expect(name, ref)
	}
}

func (q *qualitySink) Statuses(ctx context.Context, name string, sts []provider.Status) error {
	if r := q.routes.Router(); r != nil {
		for _, st := range sts {
			switch st.Status {
			case domain.Delivered:
				r.Observe(name, true)
			case domain.Failed:
				r.Observe(name, false)
			}
		}
	}
	return q.Sink.Statuses(ctx, name, sts)
}

// runRoute is a configured route as the router runs it; the names were
// checked against the built providers when the file was read.
func runRoute(r routing.Route, built map[string]provider.Provider) provider.Route {
	hours, _ := provider.ParseHours(r.Hours)
	rt := provider.Route{Name: r.Name, Order: r.Order, Channel: r.Channel, Countries: r.Countries, Prefixes: r.Prefixes,
		Accounts: r.Accounts, Senders: r.Senders, Hours: hours, Strategy: provider.Strategy(r.Strategy),
		Window: r.Window, AllowLoss: r.AllowLoss}
	for _, name := range r.Chain() {
		rt.Providers = append(rt.Providers, built[name])
		rt.Weights = append(rt.Weights, r.Weights[name])
	}
	return rt
}

// getenv is os.Getenv, except that the provider variables that also have
// flags (--smpp-addr, …) take the flag's value.
func (s *Server) getenv(key string) string {
	switch key {
	case "MSGSVC_SMPP_ADDR":
		return s.cfg.SMPPAddr
	case "MSGSVC_SMPP_SYSTEM_ID":
		return s.cfg.SMPPSystemID
	case "MSGSVC_SMPP_PASSWORD":
		return s.cfg.SMPPPassword
	}
	return os.Getenv(key)
}

// providerHealth is what /readyz shows of each configured provider and of
// the routes' circuit breakers.
func (s *Server) providerHealth(router *provider.Switch) map[string]string {
	out := map[string]string{}
	breakers := router.Breakers()
	s.adaptersMu.Lock()
	defer s.adaptersMu.Unlock()
	for _, a := range s.adapters {
		h := a.health()
		state, detail := "ok: ", h.Detail
		if !h.Ready {
			state = "down: "
		}
		if b, seen := breakers[a.p.Name()]; seen && b.Open {
			state = "failing over (breaker open after " + strconv.Itoa(b.Failures) + " failed hand-overs): "
		}
		out["provider:"+a.p.Name()] = state + detail
	}
	return out
}
