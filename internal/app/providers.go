package app

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"msgsvc/internal/provider"
	"msgsvc/internal/provider/rbm"
	"msgsvc/internal/provider/simulator"
	"msgsvc/internal/provider/smpp"
	"msgsvc/internal/provider/whatsapp"
	"msgsvc/internal/routing"
)

// adapter is a configured provider as the server runs it.
type adapter struct {
	p      provider.Provider
	start  func(ctx context.Context) error
	close  func(ctx context.Context) error
	health func() (ok bool, detail string)
	// kind is the provider type (routing.SMPP, routing.WhatsApp, routing.RBM);
	// webhook, when set, receives the platform's own webhook calls at
	// /providers/<kind>/webhook.
	kind    string
	webhook http.Handler
}

// providerWebhooks maps each provider type to the receiver of its
// platform's webhook (one path per type, so the first configured provider
// of a type receives it).
func (s *Server) providerWebhooks() map[string]http.Handler {
	out := map[string]http.Handler{}
	for _, a := range s.adapters {
		if a.webhook == nil {
			continue
		}
		if _, dup := out[a.kind]; dup {
			s.log.Warn("several providers of one type: the first configured receives the platform's webhook", "type", a.kind, "ignored", a.p.Name())
			continue
		}
		out[a.kind] = a.webhook
	}
	return out
}

// providers reads the provider configuration (the --config file, then the
// MSGSVC_SMPP_*, MSGSVC_WHATSAPP_* and MSGSVC_RBM_* shortcuts), builds each
// adapter and the router. In dev, live traffic of a channel without a
// configured route goes to the simulator; in serve it fails with NO_ROUTE.
func (s *Server) providers(sim *simulator.Simulator, sink provider.Sink, reg *prometheus.Registry) (*provider.Router, error) {
	var rc routing.Config
	var err error
	if s.cfg.Config != "" {
		if rc, err = routing.Load(s.cfg.Config, os.Getenv); err != nil {
			return nil, err
		}
	}
	if rc, err = routing.FromEnv(rc, s.getenv); err != nil {
		return nil, err
	}
	built := map[string]provider.Provider{}
	for _, spec := range rc.Providers {
		a, err := s.buildAdapter(spec, sink, reg)
		if err != nil {
			return nil, fmt.Errorf("provider %s: %w", spec.Name, err)
		}
		built[spec.Name] = a.p
		s.adapters = append(s.adapters, a)
	}
	var routes []provider.Route
	for _, r := range rc.Routes {
		rt := provider.Route{Channel: r.Channel, Countries: r.Countries, Primary: built[r.Primary]}
		if r.Secondary != "" {
			rt.Secondary = built[r.Secondary]
		}
		routes = append(routes, rt)
	}
	for _, ch := range rc.Unrouted() {
		if s.cfg.Dev {
			routes = append(routes, provider.Route{Channel: ch, Primary: sim})
			continue
		}
		s.log.Warn("no route for live messages of this channel: they fail with NO_ROUTE and are refunded", "channel", ch)
	}
	router := provider.NewRouter(sim, routes).WithClock(s.now)
	for _, spec := range rc.Providers {
		router.Tune(spec.Name, provider.BreakerSettings{Failures: spec.Breaker.Failures, Cooldown: spec.Breaker.Cooldown})
	}
	return router, nil
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

func (s *Server) buildAdapter(spec routing.Provider, sink provider.Sink, reg *prometheus.Registry) (adapter, error) {
	switch spec.Type {
	case routing.SMPP:
		return s.smppAdapter(spec, sink, reg)
	case routing.WhatsApp:
		return s.whatsappAdapter(spec, sink, reg)
	case routing.RBM:
		return s.rbmAdapter(spec, sink, reg)
	}
	return adapter{}, fmt.Errorf("provider type %s is not part of this build", spec.Type)
}

func (s *Server) smppAdapter(spec routing.Provider, sink provider.Sink, reg *prometheus.Registry) (adapter, error) {
	c := spec.SMPP
	packing := smpp.Unpacked
	if c.GSMPacking == "packed" {
		packing = smpp.Packed
	}
	client, err := smpp.New(smpp.Config{Name: spec.Name, Addr: c.Addr, SystemID: c.SystemID, Password: c.Password,
		SystemType: c.SystemType, Binds: c.Binds, Window: c.Window, TPS: float64(c.TPS), SourceAddr: c.SourceAddr,
		RequestTimeout: c.Timeout, GSMPacking: packing}, sink, smpp.WithLogger(s.log))
	if err != nil {
		return adapter{}, err
	}
	if err := reg.Register(client.Collector()); err != nil {
		return adapter{}, fmt.Errorf("metrics: %w", err)
	}
	return adapter{p: client, kind: routing.SMPP, start: client.Start, close: client.Close, health: func() (bool, string) {
		h := client.Health()
		detail := fmt.Sprintf("binds up %d/%d, window in use %d/%d, throttled %d, resubmitted %d", h.BindsUp,
			h.BindsConfigured, h.WindowInUse, h.Window*max(h.BindsConfigured, 1), h.Throttled, h.Resubmitted)
		if h.LastError != "" {
			detail += ", last error: " + h.LastError
		}
		return h.Ready(), detail
	}}, nil
}

func (s *Server) whatsappAdapter(spec routing.Provider, sink provider.Sink, reg *prometheus.Registry) (adapter, error) {
	w := spec.WhatsApp
	client, err := whatsapp.New(whatsapp.Config{Name: spec.Name, APIURL: w.APIURL, PhoneNumberID: w.PhoneNumberID, Token: w.Token,
		AppSecret: w.AppSecret, VerifyToken: w.VerifyToken, UserAgent: whatsapp.UserAgent(Version),
		RatePerSecond: float64(w.RatePerSecond), RequestTimeout: w.Timeout, CTAURLButtons: w.CTAURLButtons},
		whatsapp.Deps{Sink: sink, Files: s.media, Cache: s.store}, whatsapp.WithLogger(s.log.With("provider", spec.Name)),
		whatsapp.WithClock(s.now))
	if err != nil {
		return adapter{}, err
	}
	if err := reg.Register(client.Collector()); err != nil {
		return adapter{}, fmt.Errorf("metrics: %w", err)
	}
	return adapter{p: client, kind: routing.WhatsApp, webhook: client.Webhook(), start: client.Start, close: client.Close,
		health: func() (bool, string) {
			h := client.Health()
			detail := fmt.Sprintf("sent %d, refused %d, failed for now %d, retries %d, throttled %d, in flight %d, media uploaded %d, reused %d, webhooks %d, bad signatures %d",
				h.Sent, h.Refused, h.Failed, h.Retries, h.Throttled, h.InFlight, h.Uploads, h.Reused, h.Notifications, h.BadSignatures)
			if h.Down != "" {
				detail = "the platform refuses the token or account (" + h.Down + "): renew the token or fix the account; messages wait and retry; " + detail
			} else if h.LastError != "" {
				detail += ", last error: " + h.LastError
			}
			return h.Ready(), detail
		}}, nil
}

func (s *Server) rbmAdapter(spec routing.Provider, sink provider.Sink, reg *prometheus.Registry) (adapter, error) {
	c := spec.RBM
	key, err := os.ReadFile(c.Credentials)
	if err != nil {
		return adapter{}, fmt.Errorf("read the service-account key: %w", err)
	}
	a, err := rbm.New(rbm.Config{Name: spec.Name, AgentID: c.AgentID, Credentials: key, ClientToken: c.ClientToken, APIURL: c.APIURL,
		RatePerSecond: float64(c.RatePerSecond), RequestTimeout: c.Timeout, FallbackAfter: c.FallbackAfter}, sink,
		rbm.WithLogger(s.log), rbm.WithClock(s.now), rbm.WithFiles(s.media), rbm.WithMediaCache(s.store))
	if err != nil {
		return adapter{}, err
	}
	if err := reg.Register(a.Collector()); err != nil {
		return adapter{}, fmt.Errorf("metrics: %w", err)
	}
	return adapter{p: a, kind: routing.RBM, webhook: a.Webhook(), start: a.Start, close: a.Close, health: func() (bool, string) {
		h := a.Health()
		detail := "credentials not checked yet"
		switch {
		case h.AuthError != "":
			detail = "credentials refused: " + h.AuthError
		case h.Checked:
			detail = "credentials accepted"
		}
		if h.LastError != "" && h.LastError != h.AuthError {
			detail += ", last error: " + h.LastError
		}
		return h.Ready(), detail
	}}, nil
}

// providerHealth is what /readyz shows of each configured provider and of
// the routes' circuit breakers.
func (s *Server) providerHealth(router *provider.Router) map[string]string {
	out := map[string]string{}
	breakers := router.Breakers()
	for _, a := range s.adapters {
		ok, detail := a.health()
		state := "ok: "
		if !ok {
			state = "down: "
		}
		if b, seen := breakers[a.p.Name()]; seen && b.Open {
			state = "failing over (breaker open after " + strconv.Itoa(b.Failures) + " failed hand-overs): "
		}
		out["provider:"+a.p.Name()] = state + detail
	}
	return out
}
