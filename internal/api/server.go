package api

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/msgsvc/msgsvc/internal/api/openapi"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/message"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Store is what the API reads directly (the rest goes through services):
// the union of what each group of handlers declares beside them, which
// the storage satisfies in one value.
type Store interface {
	KeyStore
	Accounts
	IdempotencyStore
	UsageReader
	Ping(ctx context.Context) error
}

// Replies records inbound messages (the test reply endpoint).
type Replies interface {
	Receive(ctx context.Context, providerName string, in provider.Inbound) (string, error)
}

// Config wires a Server.
type Config struct {
	Store Store
	// Messages reads, cancels and redacts what was sent.
	Messages Reads
	// Sends takes sends.
	Sends   Sender
	Replies Replies
	Limiter Limiter
	// Guard counts authentication failures per client address.
	Guard AuthGuard
	// TrustedProxies are the proxies whose X-Forwarded-For names the client
	// (none by default: the TCP peer is the client).
	TrustedProxies []netip.Prefix
	// AuthFailuresPerMinute is the budget of failed authentications per
	// client address (default 30).
	AuthFailuresPerMinute int
	Registry              *prometheus.Registry
	Now                   func() time.Time
	Log                   *slog.Logger
	// Ready adds checks to /readyz beyond storage (e.g. the rate-limit
	// backend); a non-nil error is reported as degraded, not down.
	Ready func(ctx context.Context) map[string]string
	// SessionTTL is the panel session idle timeout (default 12 h).
	SessionTTL time.Duration
	// Version is the binary's version, shown by /healthz.
	Version string
	// Manage runs the management API's actions and its sessions (login,
	// logout); nil serves the routes but fails them.
	Manage Manager
	// Sending is the panel's send form and campaigns from a file; nil
	// answers 404.
	Sending Sending
	// Panel is the web panel; nil serves no pages.
	Panel Pages
	// Media stores uploads (POST media); nil answers 404.
	Media MediaStore
	// Templates lists WhatsApp templates (GET templates); nil answers 404.
	Templates TemplateLister
	// OptOuts lists the account's opt-outs (GET opt-outs); nil answers 404.
	OptOuts OptOutLister
	// ProviderWebhooks are the platforms' own webhooks: the routes every
	// provider type declares are served and documented whatever is
	// configured. Nil serves none.
	ProviderWebhooks ProviderWebhooks
	// Twilio is the Twilio-compatible API (package twilio), served under
	// /2010-04-01/ with its own authentication, errors and documentation
	// (Twilio's); nil serves none.
	Twilio http.Handler
}

// ProviderWebhooks are the provider types of the registry and the
// adapters that receive their platforms' calls. The receivers check the
// platform's signature themselves.
type ProviderWebhooks interface {
	Types() []provider.Type
	// Receiver is the adapter that takes the calls of a type's platform
	// now, nil when the node runs none of that type (its routes answer
	// 404).
	Receiver(typeName string) provider.Adapter
}

// Pages is the web panel: the patterns it serves, all handled by it.
// They are not API operations, so Routes leaves them out.
type Pages interface {
	http.Handler
	Patterns() []string
}

// Server is the HTTP front of the integration API.
type Server struct {
	cfg     Config
	mux     *http.ServeMux
	metrics *metrics
	touched sync.Map // key id -> last TouchKey time
	// patterns lists the routes, in registration order.
	patterns   []string
	unknownAPI http.Handler
}

// New builds the server and its route table.
func New(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.AuthFailuresPerMinute <= 0 {
		cfg.AuthFailuresPerMinute = 30
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), metrics: newMetrics(cfg.Registry)}
	s.routes()
	return s
}

// Request types for the per-type rate-limit windows.
const (
	typeSending = "sending"
	typeStatus  = "status"
	typeMedia   = "media"
	typeNone    = ""
)

func (s *Server) routes() {
	const base = "/api/v1/integration"
	s.handle("GET /healthz", http.HandlerFunc(s.healthz))
	s.handle("GET /readyz", http.HandlerFunc(s.readyz))
	s.handle("GET /metrics", promhttp.HandlerFor(s.cfg.Registry, promhttp.HandlerOpts{}))
	var types []provider.Type
	if s.cfg.ProviderWebhooks != nil {
		types = s.cfg.ProviderWebhooks.Types()
	}
	docs := openapi.Handler(types)
	s.handle("GET /openapi.json", docs)
	s.handle("GET /docs", docs)

	s.integration("GET "+base+"/balance", typeNone, s.balance)
	s.integration("GET /v1/account/balance", typeNone, s.balance)
	s.handle("POST "+base+"/messages", s.wrapAuthCached(typeSending, s.send))
	s.integration("GET "+base+"/messages", typeStatus, s.listMessages)
	s.integration("GET "+base+"/events", typeStatus, s.listEvents)
	s.integration("GET "+base+"/messages/{messageId}", typeStatus, s.getMessage)
	s.integration("POST "+base+"/messages/{messageId}/cancel", typeSending, s.idempotent(s.cancelMessage))
	s.integration("GET "+base+"/campaigns/{campaignId}", typeStatus, s.getCampaign)
	s.integration("POST "+base+"/campaigns/{campaignId}/cancel", typeSending, s.idempotent(s.cancelCampaign))
	s.integration("POST "+base+"/test/replies", typeNone, s.idempotent(s.testReply))
	s.integration("POST "+base+"/media", typeMedia, s.uploadMedia) // keeps Idempotency-Key itself
	s.integration("GET "+base+"/templates", typeNone, s.listTemplates)
	s.integration("GET "+base+"/limits", typeNone, s.limits)
	s.integration("GET "+base+"/usage", typeNone, s.usage)
	s.integration("GET "+base+"/opt-outs", typeNone, s.listOptOuts)
	s.integration("POST "+base+"/messages/{messageId}/redact", typeNone, s.idempotent(s.redactMessage))

	s.handle("POST /api/v1/auth/login", http.HandlerFunc(s.login))
	s.manageRoutes()
	if s.cfg.Panel != nil {
		for _, p := range s.cfg.Panel.Patterns() {
			s.mux.Handle(p, s.cfg.Panel)
		}
	}

	for _, t := range types {
		for _, rt := range t.Webhooks {
			s.handle(rt.Method+" "+t.PathOf(rt), s.providerWebhook(t.Name, rt))
		}
	}
	if s.cfg.Twilio != nil {
		// Not in Routes: Twilio's document describes these, not ours.
		s.mux.Handle("/2010-04-01/", s.cfg.Twilio)
	}
	// An unknown path under the integration API asks for a key first, so
	// that it tells nothing to a caller without one.
	s.unknownAPI = s.wrapAuth(typeNone, func(w http.ResponseWriter, r *http.Request, c message.Caller) error {
		return errNotFound
	})
	// What no route takes: matched requests never pay for this.
	s.mux.Handle("/", http.HandlerFunc(s.unmatched))
}

// providerWebhook hands a platform's webhook call to the route's receiver
// on the adapter of its type the node runs now (a reload may have rebuilt
// or removed it), or answers 404 when it runs none.
func (s *Server) providerWebhook(kind string, rt provider.WebhookRoute) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := rt.Handler(s.cfg.ProviderWebhooks.Receiver(kind)); h != nil {
			h.ServeHTTP(w, r)
			return
		}
		writeProblem(w, r, s.cfg.Log, problem("NOT_FOUND", "No "+kind+" provider is configured on this node."))
	})
}

// unmatched answers a request no route takes, as problem+json: 405 with
// Allow when the path exists with other methods, else 404.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request) {
	if allow := s.allowed(r); allow != "" {
		w.Header().Set("Allow", allow)
		writeProblem(w, r, s.cfg.Log, problem("METHOD_NOT_ALLOWED",
			"This path does not take "+r.Method+"; it takes "+allow+"."))
		return
	}
	if strings.HasPrefix(r.URL.Path, "/api/v1/integration/") {
		s.unknownAPI.ServeHTTP(w, r)
		return
	}
	if nf, ok := s.cfg.Panel.(interface {
		NotFound(http.ResponseWriter, *http.Request)
	}); ok && browsing(r) {
		nf.NotFound(w, r)
		return
	}
	writeProblem(w, r, s.cfg.Log, problem("NOT_FOUND", "No such path; the API is described at /docs."))
}

// browsing: a browser asking for a page (not a program calling the API),
// which would show problem+json as raw text.
func browsing(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		!strings.HasPrefix(r.URL.Path, "/api/") && !strings.HasPrefix(r.URL.Path, "/v1/") &&
		strings.Contains(r.Header.Get("Accept"), "text/html")
}

// allowed lists the methods that a route takes at r's path ("" for none).
func (s *Server) allowed(r *http.Request) string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			out = append(out, m)
		}
	}
	return strings.Join(out, ", ")
}

// handle registers a route and remembers its pattern (Routes).
func (s *Server) handle(pattern string, h http.Handler) {
	s.patterns = append(s.patterns, pattern)
	s.mux.Handle(pattern, h)
}

// Routes lists the "METHOD /path" patterns served; tests compare them
// with the operations of the OpenAPI document.
func (s *Server) Routes() []string { return append([]string(nil), s.patterns...) }

// handler is an integration endpoint: it gets the authenticated caller and
// returns an error instead of writing one.
type handler func(w http.ResponseWriter, r *http.Request, c message.Caller) error

func (s *Server) integration(pattern, reqType string, h handler) {
	s.handle(pattern, s.wrapAuth(reqType, h))
}

// ServeHTTP implements http.Handler: request id, panic safety, metrics.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rid := id.New(id.Request, s.cfg.Now())
	w.Header().Set("X-Request-Id", rid)
	rec := &statusRecorder{ResponseWriter: w, status: 200}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.cfg.Log.Error("panic", "requestId", rid, "panic", v)
			if !rec.wrote {
				writeProblem(rec, r, s.cfg.Log, problem("INTERNAL", "Something went wrong on our side."))
			}
		}
		// ServeMux records the matched pattern on the request it serves.
		s.metrics.observe(r.Method, r.Pattern, rec.status, time.Since(start))
	}()
	s.mux.ServeHTTP(rec, r)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	out := map[string]string{"status": "ok"}
	if s.cfg.Version != "" {
		out["version"] = s.cfg.Version
	}
	writeJSON(w, 200, out)
}

// readyz says whether the node can take work, part by part. Strangers
// (a load balancer) see each part's state only ("ok", "down", ...): the
// details name carriers' addresses, files and errors, which are for
// operators, who see them with their session (and in the log and
// metrics). Storage that cannot be read, or whose last write failed,
// makes the node unavailable (503), so that traffic goes elsewhere.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	w.Header().Set("Cache-Control", "no-store")
	parts := map[string]string{"storage": "ok"}
	if err := s.cfg.Store.Ping(ctx); err != nil {
		parts["storage"] = "unavailable: " + err.Error()
	} else if s.cfg.Ready != nil {
		for k, v := range s.cfg.Ready(ctx) {
			parts[k] = v
		}
	}
	detail := s.operatorAsks(r)
	out := map[string]any{"status": "ok"}
	for k, v := range parts {
		if !detail {
			v = partState(v)
		}
		out[k] = v
		if !strings.HasPrefix(v, "ok") {
			out["status"] = "degraded"
		}
	}
	if !strings.HasPrefix(parts["storage"], "ok") {
		out["status"] = "unavailable"
		w.Header().Set("Retry-After", unavailableRetry)
		writeJSON(w, http.StatusServiceUnavailable, out)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// partState is what strangers see of a part of /readyz: its state, the
// text before the first colon ("down: 0 of 2 binds up" shows "down").
func partState(v string) string {
	if i := strings.IndexByte(v, ':'); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}

// operatorAsks reports whether the request carries an operator's session
// (Authorization: Bearer sess_…), who may see /readyz's details. Anything
// else is a stranger's request, answered without details rather than
// refused, since load balancers call /readyz without credentials.
func (s *Server) operatorAsks(r *http.Request) bool {
	token := bearer(r)
	if token == "" || s.cfg.Manage == nil {
		return false
	}
	a, err := s.cfg.Manage.Authenticate(r.Context(), token)
	return err == nil && a.Operator()
}

type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "msgsvc_http_requests_total",
			Help: "HTTP requests by route and status code."}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "msgsvc_http_request_duration_seconds",
			Help: "HTTP request latency by route.", Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}},
			[]string{"route"}),
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

func (m *metrics) observe(method, pattern string, status int, d time.Duration) {
	if pattern == "" {
		pattern = method + " (unmatched)"
	}
	m.requests.WithLabelValues(pattern, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(pattern).Observe(d.Seconds())
}
