package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Nodes on other machines have no process here to read from /proc; their
// own Prometheus metrics (GET /metrics, the Go process collector) tell
// their CPU time and resident memory instead.

// metricsCPU sums process_cpu_seconds_total over the nodes.
func metricsCPU(ctx context.Context, urls []string) (time.Duration, error) {
	var total float64
	for _, u := range urls {
		v, err := metric(ctx, u, "process_cpu_seconds_total")
		if err != nil {
			return 0, err
		}
		total += v
	}
	return time.Duration(total * float64(time.Second)), nil
}

// metricsRSS sums process_resident_memory_bytes over the nodes, in MiB.
func metricsRSS(ctx context.Context, urls []string) float64 {
	var total float64
	for _, u := range urls {
		if v, err := metric(ctx, u, "process_resident_memory_bytes"); err == nil {
			total += v / (1 << 20)
		}
	}
	return total
}

// metric reads one unlabelled sample from a node's /metrics.
func metric(ctx context.Context, base, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("metrics of %s: %w", base, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(rest), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("metrics of %s: %w", base, err)
	}
	return 0, fmt.Errorf("metrics of %s: no %s", base, name)
}
