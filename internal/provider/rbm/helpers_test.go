package rbm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgsvc/msgsvc/internal/media"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
	"github.com/msgsvc/msgsvc/internal/provider/rbm/rbmtest"
)

const (
	testAgent = "msgsvc-test-agent"
	testToken = "client-token-0123456789abcdef"
)

// files is an account's uploads in a directory, each named by its hash.
type files struct{ *providertest.Files }

func newFiles(t *testing.T) *files { return &files{providertest.NewFiles(t)} }

func (f *files) add(t *testing.T, accountID, mediaID, mime string, data []byte) {
	sum := sha256.Sum256(data)
	f.Add(t, media.Item{ID: mediaID, AccountID: accountID, SHA256: hex.EncodeToString(sum[:]), MIME: mime, Size: int64(len(data))}, data)
}

// rig is an adapter talking to a fake platform, with a clock the test
// holds and the adapter's log kept.
type rig struct {
	p    *rbmtest.Platform
	a    *Adapter
	sink *providertest.Sink
	log  *providertest.Log
	now  time.Time
}

func newRig(t testing.TB, mutate func(c *Config), opts ...Option) *rig {
	t.Helper()
	r := &rig{p: rbmtest.New(t, testAgent), sink: &providertest.Sink{}, log: &providertest.Log{},
		now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	cfg := Config{AgentID: testAgent, Credentials: r.p.Credentials(), ClientToken: testToken, APIURL: r.p.APIURL(),
		RetryMin: time.Millisecond, RetryMax: 4 * time.Millisecond}
	if mutate != nil {
		mutate(&cfg)
	}
	log := slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts = append([]Option{WithLogger(log), WithClock(func() time.Time { return r.now }), WithRand(func() float64 { return 0.5 })}, opts...)
	a, err := New(cfg, r.sink, opts...)
	if err != nil {
		t.Fatal(err)
	}
	r.a = a
	return r
}

// sameJSON fails unless got and want are the same JSON value.
func sameJSON(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v: %s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: the expected JSON: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, got, want)
	}
}

var errStore = errors.New("the database is down")

// metric reads one of the adapter's metrics through a registry, as
// /metrics would; labels select a series (besides provider).
func metric(t *testing.T, a *Adapter, name string, labels map[string]string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(a.Collector())
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, lp := range m.GetLabel() {
				have[lp.GetName()] = lp.GetValue()
			}
			if have["provider"] != a.Name() {
				t.Fatalf("%s without the provider label: %v", name, have)
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}
