package app

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgsvc/msgsvc/internal/batch"
	"github.com/msgsvc/msgsvc/internal/store"
)

// writeCollector exposes the write path's cycle: for each level of
// grouping (the sends' loops, the reports' loops, and store.Write's loops
// behind them) how many groups ran, of how many items, how the loops'
// time went (idle, gather, run, answer) and how long items queued; and
// for the transactions, the time spent executing and committing. The
// figures are counters read when scraped: a rate of seconds over a rate
// of groups is the mean of a phase.
type writeCollector struct {
	levels  func() map[string]batch.Stats
	tx      func() store.TxStats
	groups  *prometheus.Desc
	items   *prometheus.Desc
	loop    *prometheus.Desc
	queued  *prometheus.Desc
	txCount *prometheus.Desc
	txTime  *prometheus.Desc
}

func newWriteCollector(levels func() map[string]batch.Stats, tx func() store.TxStats) *writeCollector {
	return &writeCollector{levels: levels, tx: tx,
		groups: prometheus.NewDesc("msgsvc_write_groups_total", "Groups run by a level of the write path's grouping.",
			[]string{"level"}, nil),
		items: prometheus.NewDesc("msgsvc_write_items_total", "Items grouped by a level of the write path.",
			[]string{"level"}, nil),
		loop: prometheus.NewDesc("msgsvc_write_loop_seconds_total",
			"Time a level's loops spent in each phase of their cycle: idle, gather, run, answer.", []string{"level", "phase"}, nil),
		queued: prometheus.NewDesc("msgsvc_write_queued_seconds_total",
			"Time items waited at a level before a loop took their group, summed over the items.", []string{"level"}, nil),
		txCount: prometheus.NewDesc("msgsvc_write_transactions_total", "Write transactions committed.", nil, nil),
		txTime: prometheus.NewDesc("msgsvc_write_transaction_seconds_total",
			"Time committed write transactions spent executing their writes and committing.", []string{"phase"}, nil),
	}
}

func (c *writeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.groups, c.items, c.loop, c.queued, c.txCount, c.txTime} {
		ch <- d
	}
}

func (c *writeCollector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	for level, st := range c.levels() {
		counter(c.groups, float64(st.Groups), level)
		counter(c.items, float64(st.Items), level)
		counter(c.loop, st.Idle.Seconds(), level, "idle")
		counter(c.loop, st.Gather.Seconds(), level, "gather")
		counter(c.loop, st.Run.Seconds(), level, "run")
		counter(c.loop, st.Answer.Seconds(), level, "answer")
		counter(c.queued, st.Queued.Seconds(), level)
	}
	tx := c.tx()
	counter(c.txCount, float64(tx.Committed))
	counter(c.txTime, tx.Execute.Seconds(), "execute")
	counter(c.txTime, tx.Commit.Seconds(), "commit")
}
