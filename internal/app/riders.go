package app

import (
	"github.com/prometheus/client_golang/prometheus"
)

// riders is what the tracker tells of the receipts that wait to ride with
// the record of their hand-over.
type riders interface {
	Riders() (leftBehind, overflowed int)
}

// registerRiders registers the counts of receipts that could not ride
// with the record of their hand-over. Each costs a parked row; a rising
// count left behind means records wait on something (a provider that
// does not answer a whole chunk, or a writer that is stuck).
func registerRiders(reg *prometheus.Registry, r riders) {
	left := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "msgsvc_receipts_left_behind_total",
		Help: "Receipts that waited for the record of their hand-over and were applied on their own when none took them in time."},
		func() float64 {
			n, _ := r.Riders()
			return float64(n)
		})
	over := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "msgsvc_receipts_not_waiting_total",
		Help: "Receipts applied at once, without waiting for the record of their hand-over, because as many as the tracker lets wait (tracking.maxRiding) waited already."},
		func() float64 {
			_, n := r.Riders()
			return float64(n)
		})
	reg.MustRegister(left, over)
}
