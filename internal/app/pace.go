package app

import (
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgsvc/msgsvc/internal/intake"
)

// heldLogEvery is how often at most a node logs that it holds sends back:
// under a sustained overload every send waits, and one line a minute
// with the counts tells an operator as much as thousands would.
const heldLogEvery = time.Minute

// newPaceWatch registers the metrics of the dispatcher's backlog and of
// the sends held back for it, and returns what the send service calls for
// each send that waited. The log line counts the sends held since the
// previous one.
func newPaceWatch(reg *prometheus.Registry, log *slog.Logger, now func() time.Time, q intake.Backlog) func(time.Duration) {
	backlog := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "msgsvc_dispatch_backlog",
		Help: "Messages written for this node's dispatcher and waiting in its memory for a worker."}, func() float64 {
		n, _, _ := q.Backlog()
		return float64(n)
	})
	oldest := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "msgsvc_dispatch_backlog_oldest_seconds",
		Help: "How long the oldest message waiting for this node's dispatcher has waited."}, func() float64 {
		_, d, _ := q.Backlog()
		return d.Seconds()
	})
	held := prometheus.NewCounter(prometheus.CounterOpts{Name: "msgsvc_sends_held_total",
		Help: "Sends held back before they were written because this node's dispatcher was behind (--dispatch-backlog)."})
	heldFor := prometheus.NewCounter(prometheus.CounterOpts{Name: "msgsvc_sends_held_seconds_total",
		Help: "Time sends spent held back for this node's dispatcher."})
	reg.MustRegister(backlog, oldest, held, heldFor)
	var mu sync.Mutex
	var last time.Time
	var count int
	var total time.Duration
	return func(d time.Duration) {
		held.Inc()
		heldFor.Add(d.Seconds())
		mu.Lock()
		count, total = count+1, total+d
		t := now()
		if t.Sub(last) < heldLogEvery {
			mu.Unlock()
			return
		}
		n, c := count, total
		last, count, total = t, 0, 0
		mu.Unlock()
		b, o, _ := q.Backlog()
		log.Warn("sends held back: this node's dispatcher is behind; each waits until it catches up (--dispatch-backlog)",
			"sends", n, "heldFor", c.Round(time.Millisecond), "backlog", b,
			"oldest", o.Round(time.Millisecond))
	}
}
