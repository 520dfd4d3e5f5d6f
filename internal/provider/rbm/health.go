package rbm

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of a request, as metrics label them.
const (
	outcomeOK        = "ok"
	outcomeNotFound  = "not_found"
	outcomeRefused   = "refused"
	outcomeAuth      = "auth"
	outcomeTransient = "transient"
)

func outcomeOf(status int) string {
	switch {
	case status/100 == 2:
		return outcomeOK
	case status == http.StatusNotFound:
		return outcomeNotFound
	}
	return outcomeRefused
}

// stats are the adapter's counters and its view of the platform.
type stats struct {
	requests  *prometheus.CounterVec // by operation and outcome
	retries   prometheus.Counter
	throttled prometheus.Counter
	events    *prometheus.CounterVec // webhook calls by what they carried
	rejected  prometheus.Counter     // webhook calls refused (signature, body)

	mu        sync.Mutex
	authErr   string // why the credentials were last refused; "" once a call succeeds
	authAt    time.Time
	checked   bool // a call got through, or was refused, at least once
	lastErr   string
	lastErrAt time.Time
}

func newStats(name string) *stats {
	l := prometheus.Labels{"provider": name}
	return &stats{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rbm_requests_total", ConstLabels: l,
			Help: "Requests to the RBM platform by operation (send, capability, revoke, upload) and outcome."}, []string{"operation", "outcome"}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{Name: "rbm_retries_total", ConstLabels: l,
			Help: "RBM requests tried again after a 429, a 5xx or a network error."}),
		throttled: prometheus.NewCounter(prometheus.CounterOpts{Name: "rbm_throttled_total", ConstLabels: l,
			Help: "429 answers from the RBM platform."}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rbm_webhook_events_total", ConstLabels: l,
			Help: "Webhook calls from the RBM platform by kind (status, message, validation, ignored)."}, []string{"kind"}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{Name: "rbm_webhook_rejected_total", ConstLabels: l,
			Help: "Webhook calls refused: a missing or wrong X-Goog-Signature or client token, or a malformed body."}),
	}
}

func (s *stats) request(op, outcome string) { s.requests.WithLabelValues(op, outcome).Inc() }

// noteAuth records how the credentials fared: msg is why they were
// refused, "" when a call went through.
func (a *Adapter) noteAuth(msg string) {
	s := a.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checked = true
	if msg != "" || s.authErr != "" {
		s.authErr, s.authAt = msg, a.now()
	}
	if msg != "" {
		s.lastErr, s.lastErrAt = msg, a.now()
	}
}

func (a *Adapter) noteErr(msg string) {
	s := a.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr, s.lastErrAt = msg, a.now()
}

// Health is a snapshot of the adapter for /readyz.
type Health struct {
	Name string
	// AuthError says why the platform last refused our credentials; it
	// clears when a call goes through. Checked is false until the first
	// answer about them.
	AuthError string
	Checked   bool
	// LastError is the last failure of any kind (a 5xx, a timeout).
	LastError   string
	LastErrorAt time.Time
	// FilesCached counts our uploaded files the platform holds a copy of.
	FilesCached int
}

// Ready reports whether the platform accepts our credentials (or has not
// been asked yet).
func (h Health) Ready() bool { return h.AuthError == "" }

// Health returns the adapter's current state.
func (a *Adapter) Health() Health {
	s := a.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	return Health{Name: a.cfg.Name, AuthError: s.authErr, Checked: s.checked, LastError: s.lastErr, LastErrorAt: s.lastErrAt,
		FilesCached: a.uploads.len()}
}

// Collector exposes the adapter's metrics, labelled with the provider's
// name: rbm_up (1 while the credentials are accepted), rbm_requests_total,
// rbm_retries_total, rbm_throttled_total, rbm_webhook_events_total and
// rbm_webhook_rejected_total. Register it with the application's registry.
func (a *Adapter) Collector() prometheus.Collector {
	up := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rbm_up", ConstLabels: prometheus.Labels{"provider": a.cfg.Name},
		Help: "1 while the RBM platform accepts the service account's credentials."}, func() float64 {
		if a.Health().Ready() {
			return 1
		}
		return 0
	})
	s := a.stats
	return collectors{up, s.requests, s.retries, s.throttled, s.events, s.rejected}
}

type collectors []prometheus.Collector

func (cs collectors) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range cs {
		c.Describe(ch)
	}
}

func (cs collectors) Collect(ch chan<- prometheus.Metric) {
	for _, c := range cs {
		c.Collect(ch)
	}
}
