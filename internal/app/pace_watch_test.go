package app

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type stillQueue struct{}

func (stillQueue) Backlog() (int, time.Duration, <-chan struct{}) {
	return 700, 1500 * time.Millisecond, nil
}

// Every send held counts in the metrics; the log says so at most once a
// minute, with the sends held since its previous line and the backlog.
func TestHeldSendsAreCountedAndLoggedOnceAMinute(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	reg := prometheus.NewRegistry()
	held := newPaceWatch(reg, log, func() time.Time { return now }, stillQueue{})
	held(200 * time.Millisecond) // logged at once: the first
	now = now.Add(10 * time.Second)
	held(300 * time.Millisecond)
	held(400 * time.Millisecond)
	now = now.Add(55 * time.Second)
	held(100 * time.Millisecond) // a minute after the first line
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2:\n%s", len(lines), buf.String())
	}
	for i, want := range []string{"sends=1 heldFor=200ms backlog=700 oldest=1.5s", "sends=3 heldFor=800ms backlog=700 oldest=1.5s"} {
		if !strings.Contains(lines[i], "level=WARN") || !strings.Contains(lines[i], "dispatcher is behind") || !strings.Contains(lines[i], want) {
			t.Errorf("line %d: %s; want %q", i, lines[i], want)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		m := mf.GetMetric()[0]
		switch {
		case m.Counter != nil:
			got[mf.GetName()] = m.Counter.GetValue()
		case m.Gauge != nil:
			got[mf.GetName()] = m.Gauge.GetValue()
		}
	}
	want := map[string]float64{"msgsvc_sends_held_total": 4, "msgsvc_sends_held_seconds_total": 1.0,
		"msgsvc_dispatch_backlog": 700, "msgsvc_dispatch_backlog_oldest_seconds": 1.5}
	for k, v := range want {
		if d := got[k] - v; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}
