package whatsapp

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Health is a snapshot of a client for /readyz and metrics.
type Health struct {
	Name string
	// Down says why the platform refuses every request (an expired or
	// invalid token, a locked account); "" while it takes them.
	Down string
	// Sent, Refused and Failed count messages: taken by the platform,
	// refused for their own sake, failed for now (retried later).
	Sent, Refused, Failed uint64
	// Retries counts attempts repeated after a transient error or a rate
	// limit; Throttled counts the rate-limit answers.
	Retries, Throttled uint64
	// Uploads counts files uploaded; Reused counts sends of a file the
	// platform already had.
	Uploads, Reused uint64
	// Notifications counts webhook calls taken; BadSignatures those
	// refused for their signature.
	Notifications, BadSignatures uint64
	InFlight                     int64
	LastError                    string
	LastErrorAt                  time.Time
}

// Ready reports whether the platform accepts our credentials (as far as
// the last request showed).
func (h Health) Ready() bool { return h.Down == "" }

// Health returns the client's current state.
func (c *Client) Health() Health {
	k := &c.counts
	h := Health{Name: c.cfg.Name, Sent: k.sent.Load(), Refused: k.refused.Load(), Failed: k.failed.Load(),
		Retries: k.retries.Load(), Throttled: k.throttled.Load(), Uploads: k.uploads.Load(), Reused: k.reused.Load(),
		Notifications: k.notifications.Load(), BadSignatures: k.badSignatures.Load(), InFlight: k.inFlight.Load()}
	c.mu.Lock()
	defer c.mu.Unlock()
	h.Down, h.LastError, h.LastErrorAt = c.downFor, c.lastErr, c.lastErrAt
	return h
}

// Collector exposes Health as Prometheus metrics labelled with the
// provider's name: whatsapp_up, whatsapp_requests_in_flight and the
// counters whatsapp_messages_total{outcome}, whatsapp_retries_total,
// whatsapp_throttled_total, whatsapp_media_total{source} and
// whatsapp_webhooks_total{outcome}.
func (c *Client) Collector() prometheus.Collector {
	l := prometheus.Labels{"provider": c.cfg.Name}
	d := func(metric, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(metric, help, labels, l)
	}
	return &collector{c: c,
		up:        d("whatsapp_up", "1 while the platform accepts the provider's token and account."),
		inFlight:  d("whatsapp_requests_in_flight", "Requests to the platform awaiting an answer."),
		messages:  d("whatsapp_messages_total", "Messages handed to the platform, by outcome.", "outcome"),
		retries:   d("whatsapp_retries_total", "Requests tried again after a transient error or a rate limit."),
		throttled: d("whatsapp_throttled_total", "Rate-limit answers from the platform."),
		media:     d("whatsapp_media_total", "Uploaded files sent, by whether they were uploaded or reused.", "source"),
		webhooks:  d("whatsapp_webhooks_total", "Webhook notifications, by outcome.", "outcome"),
	}
}

type collector struct {
	c                                                           *Client
	up, inFlight, messages, retries, throttled, media, webhooks *prometheus.Desc
}

func (k *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{k.up, k.inFlight, k.messages, k.retries, k.throttled, k.media, k.webhooks} {
		ch <- d
	}
}

func (k *collector) Collect(ch chan<- prometheus.Metric) {
	h := k.c.Health()
	up := 0.0
	if h.Ready() {
		up = 1
	}
	m := func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, t, v, labels...)
	}
	m(k.up, prometheus.GaugeValue, up)
	m(k.inFlight, prometheus.GaugeValue, float64(h.InFlight))
	m(k.messages, prometheus.CounterValue, float64(h.Sent), "sent")
	m(k.messages, prometheus.CounterValue, float64(h.Refused), "refused")
	m(k.messages, prometheus.CounterValue, float64(h.Failed), "failed")
	m(k.retries, prometheus.CounterValue, float64(h.Retries))
	m(k.throttled, prometheus.CounterValue, float64(h.Throttled))
	m(k.media, prometheus.CounterValue, float64(h.Uploads), "uploaded")
	m(k.media, prometheus.CounterValue, float64(h.Reused), "reused")
	m(k.webhooks, prometheus.CounterValue, float64(h.Notifications), "accepted")
	m(k.webhooks, prometheus.CounterValue, float64(h.BadSignatures), "bad_signature")
}
