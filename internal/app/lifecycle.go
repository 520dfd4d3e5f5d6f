package app

import (
	"context"
	"errors"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/msgsvc/msgsvc/internal/lifecycle"
)

// parts lists the node's long-lived parts in the order they start,
// each after what it needs; they stop in reverse. So the HTTP front and
// the SMPP server stop taking requests first; the background services
// then finish what they claimed (what hands out work before what takes
// it); the providers stop once nothing hands them messages; the leases
// still held go back to the other nodes; the group commits of sends and
// reports flush; storage closes last.
func (s *Server) parts() *lifecycle.Group {
	g := &lifecycle.Group{}
	g.Add("storage", lifecycle.Closer(s.store.Close))
	g.Add("rate limits", lifecycle.Closer(func() error {
		if s.closeRL != nil {
			_ = s.closeRL() // the node stops all the same
		}
		if s.closeFraud != nil {
			_ = s.closeFraud()
		}
		return nil
	}))
	g.Add("tracker", lifecycle.Closer(func() error { s.tracker.Close(); return nil }))
	g.Add("sends", lifecycle.Closer(func() error { s.sends.Close(); return nil }))
	g.Add("leases", lifecycle.Hooks{
		OnStart: func(context.Context) error {
			s.releaseLeases("took back the work a previous run of this node had claimed")
			return nil
		},
		OnStop: func(context.Context) error {
			s.releaseLeases("released claimed work for other nodes")
			return nil
		}})
	g.Add("providers", lifecycle.Hooks{OnStart: s.startProviders, OnStop: s.stopProviders})
	for _, svc := range s.services {
		g.Add(svc.name, s.worker(svc))
	}
	if s.smpp != nil {
		g.Add("smpp server", lifecycle.Background(func(ctx context.Context) {
			if err := s.smpp.Serve(ctx, s.smppListener); err != nil {
				s.log.Error("smpp server stopped", "err", err)
			}
		}))
	}
	g.Add("http", lifecycle.Hooks{
		OnStart: func(context.Context) error {
			go func() {
				err := s.http.Serve(s.listener)
				if errors.Is(err, http.ErrServerClosed) {
					err = nil // a stop, not a failure
				}
				s.serveErr <- err
			}()
			return nil
		},
		// Requests in flight finish before what they use stops.
		OnStop: s.http.Shutdown})
	if s.cfg.PprofAddr != "" {
		g.Add("pprof", s.pprof())
	}
	return g
}

// worker is a background service as a part of the lifecycle. One that
// does not stop in time is left to its context: its leases lapse and
// other nodes take its work over, so the node stops all the same.
func (s *Server) worker(svc *service) lifecycle.Component {
	bg := lifecycle.Background(svc.run)
	return lifecycle.Hooks{OnStart: bg.Start, OnStop: func(ctx context.Context) error {
		if err := bg.Stop(ctx); err != nil {
			s.log.Warn("worker did not stop in time; its leases will lapse and other nodes take over", "worker", svc.name, "err", err)
		}
		return nil
	}}
}

// pprof exposes the Go profiler on its own (operator-chosen, usually
// loopback) address, never on the API listener.
func (s *Server) pprof() lifecycle.Component {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	srv := &http.Server{Addr: s.cfg.PprofAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return lifecycle.Hooks{
		OnStart: func(context.Context) error {
			go func() {
				if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
					s.log.Warn("pprof listener stopped", "err", err)
				}
			}()
			return nil
		},
		OnStop: func(ctx context.Context) error {
			_ = srv.Close() // a profile being taken is cut short
			return nil
		}}
}
