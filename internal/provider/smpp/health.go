package smpp

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Health is a snapshot of a client for /readyz and metrics.
type Health struct {
	Name            string
	BindsConfigured int
	BindsUp         int
	// Window is the outstanding requests allowed per bind; WindowInUse
	// counts those awaiting a response now, over all binds.
	Window      int
	WindowInUse int
	// Throttled counts ESME_RTHROTTLED answers; Resubmitted counts
	// submit_sm sent again after a lost connection or a timeout.
	Throttled   uint64
	Resubmitted uint64
	// InboundRefused counts deliver_sm answered with an error, by the
	// status's name (ESME_RX_T_APPN: the receipt or reply could not be
	// stored now); InboundPaused counts the times a bind stopped reading
	// because every inbound handler of it was busy.
	InboundRefused map[string]uint64
	InboundPaused  uint64
	// Reassembling is the number of inbound messages waiting for parts.
	Reassembling int
	LastError    string
	LastErrorAt  time.Time
}

// Ready reports whether at least one bind is up.
func (h Health) Ready() bool { return h.BindsUp > 0 }

// Health returns the client's current state.
func (c *Client) Health() Health {
	h := Health{
		Name: c.cfg.Name, BindsConfigured: c.cfg.Binds, Window: c.cfg.Window,
		Throttled: c.throttled.Load(), Resubmitted: c.resubmitted.Load(), Reassembling: c.reasm.len(),
		InboundPaused: c.paused.Load(),
	}
	c.refusedMu.Lock()
	if len(c.refused) > 0 {
		h.InboundRefused = make(map[string]uint64, len(c.refused))
		for st, n := range c.refused {
			h.InboundRefused[st.String()] = n
		}
	}
	c.refusedMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.sessions {
		if s != nil && !s.isClosed() {
			h.BindsUp++
			h.WindowInUse += len(s.window)
		}
	}
	h.LastError, h.LastErrorAt = c.lastErr, c.lastErrAt
	return h
}

// Collector exposes Health as Prometheus metrics labelled with the
// provider's name: smpp_binds_configured, smpp_binds_up,
// smpp_window_in_use, smpp_throttled_total, smpp_resubmitted_total,
// smpp_reassembling, smpp_inbound_refused_total (also by reason, the
// status's name) and smpp_inbound_paused_total. Register it with the
// application's registry.
func (c *Client) Collector() prometheus.Collector {
	return &collector{c: c, descs: newDescs(c.cfg.Name)}
}

type descs struct {
	bindsConfigured, bindsUp, windowInUse, throttled, resubmitted, reassembling *prometheus.Desc
	inboundRefused, inboundPaused                                               *prometheus.Desc
}

func newDescs(name string) descs {
	l := prometheus.Labels{"provider": name}
	d := func(metric, help string) *prometheus.Desc { return prometheus.NewDesc(metric, help, nil, l) }
	return descs{
		bindsConfigured: d("smpp_binds_configured", "SMPP binds configured."),
		bindsUp:         d("smpp_binds_up", "SMPP binds currently bound."),
		windowInUse:     d("smpp_window_in_use", "SMPP requests awaiting a response."),
		throttled:       d("smpp_throttled_total", "ESME_RTHROTTLED answers received."),
		resubmitted:     d("smpp_resubmitted_total", "submit_sm sent again after a lost connection or timeout."),
		reassembling:    d("smpp_reassembling", "Inbound concatenated messages waiting for parts."),
		inboundRefused: prometheus.NewDesc("smpp_inbound_refused_total",
			"deliver_sm answered with an error (by reason: the status sent).", []string{"reason"}, l),
		inboundPaused: d("smpp_inbound_paused_total", "Times a bind stopped reading while its inbound handlers were all busy."),
	}
}

type collector struct {
	c     *Client
	descs descs
}

func (k *collector) Describe(ch chan<- *prometheus.Desc) {
	d := k.descs
	for _, x := range []*prometheus.Desc{d.bindsConfigured, d.bindsUp, d.windowInUse, d.throttled, d.resubmitted, d.reassembling,
		d.inboundRefused, d.inboundPaused} {
		ch <- x
	}
}

func (k *collector) Collect(ch chan<- prometheus.Metric) {
	h, d := k.c.Health(), k.descs
	ch <- prometheus.MustNewConstMetric(d.bindsConfigured, prometheus.GaugeValue, float64(h.BindsConfigured))
	ch <- prometheus.MustNewConstMetric(d.bindsUp, prometheus.GaugeValue, float64(h.BindsUp))
	ch <- prometheus.MustNewConstMetric(d.windowInUse, prometheus.GaugeValue, float64(h.WindowInUse))
	ch <- prometheus.MustNewConstMetric(d.throttled, prometheus.CounterValue, float64(h.Throttled))
	ch <- prometheus.MustNewConstMetric(d.resubmitted, prometheus.CounterValue, float64(h.Resubmitted))
	ch <- prometheus.MustNewConstMetric(d.reassembling, prometheus.GaugeValue, float64(h.Reassembling))
	ch <- prometheus.MustNewConstMetric(d.inboundPaused, prometheus.CounterValue, float64(h.InboundPaused))
	for reason, n := range h.InboundRefused {
		ch <- prometheus.MustNewConstMetric(d.inboundRefused, prometheus.CounterValue, float64(n), reason)
	}
}
