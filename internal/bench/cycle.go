package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// Cycle is how the nodes' write path spent a run (from the write
// metrics of GET /metrics, read before and after): for each level of
// grouping, and for the transactions behind them.
type Cycle struct {
	Levels map[string]CycleLevel `json:"levels"`
	// Transactions committed, and the mean time of one executing its
	// writes and committing, in ms.
	Transactions int64   `json:"transactions"`
	ExecuteMs    float64 `json:"executeMs"`
	CommitMs     float64 `json:"commitMs"`
}

// CycleLevel is one level's groups: how many, their mean size, the mean
// time of each phase of a loop's cycle per group (ms), the mean time an
// item queued before a loop took its group (ms), and the share of the
// loops' time not spent idle.
type CycleLevel struct {
	Groups   int64   `json:"groups"`
	Items    float64 `json:"itemsPerGroup"`
	IdleMs   float64 `json:"idleMs"`
	GatherMs float64 `json:"gatherMs"`
	RunMs    float64 `json:"runMs"`
	AnswerMs float64 `json:"answerMs"`
	QueuedMs float64 `json:"queuedMs"`
	Busy     float64 `json:"busy"`
}

// writeSeries reads the msgsvc_write_ series of the nodes, summed over
// them, keyed by the series' name and labels as printed.
func writeSeries(ctx context.Context, urls []string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, u := range urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+"/metrics", nil)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, fmt.Errorf("metrics of %s: %w", u, err)
		}
		err = readSeries(resp.Body, "msgsvc_write_", out)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("metrics of %s: %w", u, err)
		}
	}
	return out, nil
}

func readSeries(r io.Reader, prefix string, out map[string]float64) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] += v
	}
	return sc.Err()
}

// cycleOf turns two readings of the write series into a Cycle; nil when
// the nodes expose none (an older build).
func cycleOf(before, after map[string]float64) *Cycle {
	d := func(key string) float64 { return after[key] - before[key] }
	var levels []string
	for k := range after {
		if rest, ok := strings.CutPrefix(k, `msgsvc_write_groups_total{level="`); ok {
			levels = append(levels, strings.TrimSuffix(rest, `"}`))
		}
	}
	if len(levels) == 0 {
		return nil
	}
	sort.Strings(levels)
	c := &Cycle{Levels: map[string]CycleLevel{}}
	for _, l := range levels {
		groups := d(`msgsvc_write_groups_total{level="` + l + `"}`)
		if groups <= 0 {
			continue
		}
		items := d(`msgsvc_write_items_total{level="` + l + `"}`)
		phase := func(p string) float64 {
			return d(`msgsvc_write_loop_seconds_total{level="`+l+`",phase="`+p+`"}`) * 1000
		}
		idle, gather, run, answer := phase("idle"), phase("gather"), phase("run"), phase("answer")
		lv := CycleLevel{Groups: int64(groups), Items: items / groups, IdleMs: idle / groups, GatherMs: gather / groups,
			RunMs: run / groups, AnswerMs: answer / groups}
		if items > 0 {
			lv.QueuedMs = d(`msgsvc_write_queued_seconds_total{level="`+l+`"}`) * 1000 / items
		}
		if all := idle + gather + run + answer; all > 0 {
			lv.Busy = (gather + run + answer) / all
		}
		c.Levels[l] = lv
	}
	if n := d("msgsvc_write_transactions_total"); n > 0 {
		c.Transactions = int64(n)
		c.ExecuteMs = d(`msgsvc_write_transaction_seconds_total{phase="execute"}`) * 1000 / n
		c.CommitMs = d(`msgsvc_write_transaction_seconds_total{phase="commit"}`) * 1000 / n
	}
	return c
}

// printCycle writes the write path's cycle of a run, a line per level.
func printCycle(w io.Writer, c *Cycle) {
	if c == nil {
		return
	}
	names := make([]string, 0, len(c.Levels))
	for n := range c.Levels {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		l := c.Levels[n]
		fmt.Fprintf(w, "write cycle %-9s %d groups of %.1f: idle %.2f gather %.3f run %.2f answer %.3f ms; queued %.2f ms/item; busy %.0f%%\n",
			n, l.Groups, l.Items, l.IdleMs, l.GatherMs, l.RunMs, l.AnswerMs, l.QueuedMs, 100*l.Busy)
	}
	if c.Transactions > 0 {
		fmt.Fprintf(w, "write transactions    %d: execute %.2f ms, commit %.3f ms\n", c.Transactions, c.ExecuteMs, c.CommitMs)
	}
}
