package app

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgsvc/msgsvc/internal/lifecycle"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/routing"
)

// adapterMetrics is the registry as one adapter sees it: it remembers what
// the adapter registered, so that replacing the adapter can take it back.
type adapterMetrics struct {
	reg prometheus.Registerer
	mu  sync.Mutex
	cs  []prometheus.Collector
}

func (m *adapterMetrics) Register(c prometheus.Collector) error {
	if err := m.reg.Register(c); err != nil {
		return err
	}
	m.mu.Lock()
	m.cs = append(m.cs, c)
	m.mu.Unlock()
	return nil
}

func (m *adapterMetrics) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := m.Register(c); err != nil {
			panic(err)
		}
	}
}

func (m *adapterMetrics) Unregister(c prometheus.Collector) bool { return m.reg.Unregister(c) }

func (m *adapterMetrics) unregister() {
	m.each(func(c prometheus.Collector) { m.reg.Unregister(c) })
}

func (m *adapterMetrics) reregister() {
	m.each(func(c prometheus.Collector) { _ = m.reg.Register(c) })
}

// each applies f to every collector the adapters registered; a node
// without a registry has none.
func (m *adapterMetrics) each(f func(c prometheus.Collector)) {
	if m == nil || m.reg == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.cs {
		f(c)
	}
}

// reloadState is the outcome of the last reload, for /readyz and metrics.
type reloadState struct {
	mu     sync.Mutex // one reload at a time
	failed error
	at     time.Time
	// running is the configuration in use, which a reload compares the
	// file with.
	running routing.Config
	outcome *prometheus.CounterVec
	valid   prometheus.Gauge
}

func newReloadState(reg prometheus.Registerer) *reloadState {
	r := &reloadState{
		outcome: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "msgsvc_config_reloads_total",
			Help: "Reloads of the configuration file (SIGHUP) by outcome."}, []string{"outcome"}),
		valid: prometheus.NewGauge(prometheus.GaugeOpts{Name: "msgsvc_config_last_reload_ok",
			Help: "1 when the last reload of the configuration file succeeded (or none was asked), 0 while the node runs the previous one."}),
	}
	r.valid.Set(1)
	reg.MustRegister(r.outcome, r.valid)
	return r
}

// health is what /readyz shows of the configuration: its state before the
// first colon (all that strangers see), the details after it.
func (r *reloadState) health() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed == nil {
		return "ok"
	}
	state := "reload failed"
	if errors.Is(r.failed, errRoutesLost) {
		state = "reload refused"
	}
	return fmt.Sprintf("%s, running the previous configuration: at %s: %v", state, r.at.UTC().Format(time.RFC3339), r.failed)
}

// errRoutesLost marks a reload refused because it would leave a channel
// without the routes it has.
var errRoutesLost = errors.New("refused: it would leave a channel without any route")

// lostChannels lists the channels that have a route in running and none
// in next, in a stable order.
func lostChannels(running, next routing.Config) []string {
	have := next.Channels()
	var out []string
	for ch := range running.Channels() {
		if !have[ch] {
			out = append(out, string(ch))
		}
	}
	sort.Strings(out)
	return out
}

// startProviders starts the configured providers in the order of the
// file; when one fails, those started stop again. A reload waits for it.
func (s *Server) startProviders(ctx context.Context) error {
	s.reloads.mu.Lock()
	defer s.reloads.mu.Unlock()
	// The providers run until stopProviders, not until the start's ctx ends.
	s.providerCtx, s.stopProviderCtx = context.WithCancel(context.WithoutCancel(ctx))
	if err := startAdapters(s.providerCtx, s.adapters); err != nil {
		s.stopProviderCtx()
		return err
	}
	return nil
}

// stopProviders stops the providers in use. One that fails to stop is
// logged: its peer sees the connection close all the same.
func (s *Server) stopProviders(ctx context.Context) error {
	s.reloads.mu.Lock() // no reload while the providers stop
	defer s.reloads.mu.Unlock()
	if s.stopProviderCtx != nil {
		s.stopProviderCtx()
	}
	s.stopAdapters(ctx, s.adapters)
	return nil
}

// startAdapters starts adapters in order, through a lifecycle group so
// that a failure stops again those it had started.
func startAdapters(ctx context.Context, as []adapter) error {
	g := &lifecycle.Group{}
	for _, a := range as {
		g.Add("provider "+a.p.Name(), lifecycle.Hooks{OnStart: a.start, OnStop: a.close})
	}
	return g.Start(ctx)
}

// stopAdapters stops adapters, each even when another failed to.
func (s *Server) stopAdapters(ctx context.Context, as []adapter) {
	for _, a := range as {
		if e := a.close(ctx); e != nil {
			s.log.Warn("stop provider", "provider", a.p.Name(), "err", e)
		}
	}
}

// Reload reads the configuration file again and puts it in use: providers
// whose settings did not change keep running (an SMSC's binds stay up),
// changed and new ones are built and started, removed ones stopped, and
// the routes replaced. An invalid file changes nothing: the node keeps the
// configuration it runs, says so in the log, /readyz and metrics, and the
// error is returned. So does a file that would leave a channel without any
// of the routes it has (an editor that truncated it, a route deleted by
// mistake): ForceReload puts such a file in use.
func (s *Server) Reload(ctx context.Context) error { return s.reloadFile(ctx, false) }

// ForceReload is Reload that also puts in use a file that takes every
// route of a channel away (its live messages then fail NO_ROUTE).
func (s *Server) ForceReload(ctx context.Context) error { return s.reloadFile(ctx, true) }

func (s *Server) reloadFile(ctx context.Context, force bool) error {
	s.reloads.mu.Lock()
	defer s.reloads.mu.Unlock()
	kept, started, stopped, err := s.reload(ctx, force)
	s.reloads.at = s.now()
	if err != nil {
		s.reloads.failed = err
		outcome := "failed"
		if errors.Is(err, errRoutesLost) {
			outcome = "refused"
		}
		s.reloads.outcome.WithLabelValues(outcome).Inc()
		s.reloads.valid.Set(0)
		s.log.Error("configuration reload failed: still running the previous configuration", "file", s.cfg.Config, "err", err)
		return err
	}
	s.reloads.failed = nil
	s.reloads.outcome.WithLabelValues("ok").Inc()
	s.reloads.valid.Set(1)
	s.log.Info("configuration reloaded", "file", s.cfg.Config, "kept", kept, "started", started, "stopped", stopped)
	return nil
}

func (s *Server) reload(ctx context.Context, force bool) (kept, started, stopped []string, err error) {
	if s.providerCtx == nil {
		return nil, nil, nil, errors.New("the node is not running")
	}
	rc, types, err := s.loadRouting()
	if err != nil {
		return nil, nil, nil, err
	}
	if lost := lostChannels(s.reloads.running, rc); len(lost) > 0 {
		if !force {
			return nil, nil, nil, fmt.Errorf("%w (%s): send SIGUSR2 instead of SIGHUP to put it in use anyway", errRoutesLost,
				strings.Join(lost, ", "))
		}
		s.log.Warn("forced reload: these channels have no route any more; their live messages fail NO_ROUTE", "channels", lost)
	}
	s.adaptersMu.Lock()
	old := map[string]adapter{}
	for _, a := range s.adapters {
		old[a.p.Name()] = a
	}
	s.adaptersMu.Unlock()
	var next, fresh, replaced []adapter
	built := map[string]provider.Provider{}
	undo := func() {
		for _, a := range fresh {
			a.metrics.unregister()
		}
		for _, a := range replaced {
			a.metrics.reregister()
		}
	}
	for _, spec := range rc.Providers {
		prev, ok := old[spec.Name]
		if ok && prev.spec.Type == spec.Type && reflect.DeepEqual(prev.spec.Settings, spec.Settings) {
			next, built[spec.Name] = append(next, prev), prev.p
			kept = append(kept, spec.Name)
			continue
		}
		if ok {
			prev.metrics.unregister() // the new adapter registers the same names
			replaced = append(replaced, prev)
		}
		a, err := s.buildAdapter(types, spec)
		if err != nil {
			undo()
			return nil, nil, nil, errors.Join(err, errors.New("nothing was changed"))
		}
		fresh, next, built[spec.Name] = append(fresh, a), append(next, a), a.p
		started = append(started, spec.Name)
	}
	// The new set starts before the swap, and the old one stops after it,
	// so that messages always have a running adapter to go to.
	if err := startAdapters(s.providerCtx, fresh); err != nil {
		undo()
		return nil, nil, nil, errors.Join(err, errors.New("nothing was changed"))
	}
	s.routing.Swap(s.buildRouter(rc, built, s.sim))
	s.reloads.running = rc
	s.adaptersMu.Lock()
	s.adapters = next
	s.adaptersMu.Unlock()
	var gone []adapter
	for name, a := range old {
		if n, ok := built[name]; ok && n == a.p {
			continue
		}
		gone = append(gone, a)
		stopped = append(stopped, name)
	}
	s.stopAdapters(ctx, gone)
	for _, a := range gone {
		a.metrics.unregister()
	}
	return kept, started, stopped, nil
}
