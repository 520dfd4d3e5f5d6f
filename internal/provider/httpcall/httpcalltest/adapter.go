package httpcalltest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
)

// T0 is the instant an adapter's tests start their Clock at.
var T0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

// Retrying is the tuning of an adapter under its own tests: retries tens
// of milliseconds apart, which the Clock records rather than waits.
var Retrying = httpcall.Tuning{RetryMin: 10 * time.Millisecond, RetryMax: 40 * time.Millisecond}

// Once is the tuning of an adapter sending to a mock: one attempt, so
// that every refusal is seen.
var Once = httpcall.Tuning{MaxAttempts: 1}

// Open makes an adapter of cfg, changed by tune when set, with newA (the
// adapter package's New): its statuses and replies go to the Sink
// returned, its waits to the Clock at T0.
func Open[C, A any](t *testing.T, cfg C, tune func(*C), newA func(C, provider.Deps, httpcall.Deps) (A, error)) (A, *providertest.Sink, *Clock) {
	t.Helper()
	if tune != nil {
		tune(&cfg)
	}
	sink := &providertest.Sink{}
	clock := NewClock(T0)
	a, err := newA(cfg, provider.Deps{Sink: sink}, clock.Deps())
	if err != nil {
		t.Fatal(err)
	}
	return a, sink, clock
}

// Health is what an AnswerCase expects of the adapter's health after the
// answer.
type Health int

// Unchecked leaves the health alone; Ready and Down want it ready or not.
const (
	Unchecked Health = iota
	Ready
	Down
)

// AnswerCase is one answer of a platform to a send and what the send's
// result must be.
type AnswerCase struct {
	Status int
	Body   string
	Header http.Header
	// Code and Temporary are the result's error.
	Code      string
	Temporary bool
	// Attempts, when above zero, is how many requests reached the
	// platform; Waited, when above zero, the first wait.
	Attempts int
	Waited   time.Duration
	Health   Health
}

// CheckAnswers sends m through an adapter open makes over a fresh
// stand-in (start) told to give each case's answer, and checks the result.
func CheckAnswers[T any](t *testing.T, cases []AnswerCase, m provider.Outbound, start func(testing.TB) *Fake[T],
	open func(p *Fake[T]) (provider.Adapter, *Clock)) {
	t.Helper()
	for _, c := range cases {
		p := start(t)
		p.SetAnswer(func(T) (int, string, http.Header, bool) { return c.Status, c.Body, c.Header, true })
		a, clock := open(p)
		res := a.Submit(context.Background(), []provider.Outbound{m})
		if e := res[0].Err; e == nil || e.Code != c.Code || e.Temporary != c.Temporary {
			t.Errorf("%d %s: %+v", c.Status, c.Body, e)
		}
		if n := len(p.Sends()); c.Attempts > 0 && n != c.Attempts {
			t.Errorf("%d %s: %d attempts, want %d", c.Status, c.Body, n, c.Attempts)
		}
		if w := clock.Waits(); c.Waited > 0 && (len(w) == 0 || w[0] != c.Waited) {
			t.Errorf("%d %s: waited %v, want %v first", c.Status, c.Body, w, c.Waited)
		}
		if h := a.Health(); c.Health != Unchecked && h.Ready != (c.Health == Ready) {
			t.Errorf("%d %s: health %+v", c.Status, c.Body, h)
		}
	}
}

// Refused checks that a callback (the case name) was refused as unsigned.
func Refused(t *testing.T, name string, w *httptest.ResponseRecorder) {
	t.Helper()
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "INVALID_SIGNATURE") {
		t.Errorf("%s: %d %s", name, w.Code, w.Body)
	}
}

// NothingRecorded fails t when sink got a status or a reply.
func NothingRecorded(t *testing.T, sink *providertest.Sink) {
	t.Helper()
	if st, in := sink.Got(); len(st) != 0 || len(in) != 0 {
		t.Fatalf("recorded %+v %+v", st, in)
	}
}

// PeerCase is one kind of message a peer test sends, with what it changes
// in the adapter's configuration (nil: nothing).
type PeerCase[C any] struct {
	Name string
	Tune func(*C)
	Msg  provider.Outbound
}

// CheckPeer sends each case's message through an adapter of cfg (tuned)
// made by newA over a Recorder rec makes, to the mock, and checks that it
// was taken with a ref ref approves and nothing in it was found wrong.
func CheckPeer[C any, A provider.Provider](t *testing.T, cfg C, cases []PeerCase[C], rec func() *Recorder,
	newA func(C, provider.Deps, httpcall.Deps) (A, error), ref func(string) bool) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			r, cfg := rec(), cfg
			if c.Tune != nil {
				c.Tune(&cfg)
			}
			a, err := newA(cfg, PeerDeps(), r.Deps())
			if err != nil {
				t.Fatal(err)
			}
			r.SubmitOne(t, a, c.Msg, ref)
		})
	}
}

// Stand is what the conformance suite tells an adapter's stand-in: start
// starts one, key reads a send's recipient, and Answers are the canned
// answers by recipient (Busy's refuses for now, Bad's for good).
type Stand[T any] struct {
	Start     func(testing.TB) *Fake[T]
	Key       func(body T) string
	Busy, Bad string
	Answers   map[string]Canned
}

// Conformance runs the providertest suite on adapters of typ, named
// "<type>-conformance", each configured by cfg over a fresh stand-in at
// url; report makes the platform report a taken message to a.
func Conformance[T any](t *testing.T, typ provider.Type, s Stand[T], cfg func(url string) provider.Settings,
	report func(t *testing.T, a provider.Adapter, m provider.Outbound, r provider.Result)) {
	name := typ.Name + "-conformance"
	providertest.Run(t, providertest.Harness{Name: name, Type: typ,
		New: func(t *testing.T, sink provider.Sink) providertest.Instance {
			p := s.Start(t)
			p.AnswerTo(s.Key, s.Answers)
			a, err := typ.Build(context.Background(), name, cfg(p.URL), providertest.Quiet(sink))
			if err != nil {
				t.Fatal(err)
			}
			return Instance(a, s.Busy, s.Bad, func(t *testing.T, m provider.Outbound, r provider.Result) { report(t, a, m, r) })
		}})
}
