package httpcalltest

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
)

// Fast is the tuning of an adapter under the conformance suite: retries
// a few milliseconds apart.
var Fast = httpcall.Tuning{RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond}

// Instance is the conformance suite's view of adapter a: a message to an
// ordinary number is taken, to busy refused for now and to bad for good
// (as the test told its stand-in); report makes the platform report a
// taken message.
func Instance(a provider.Adapter, busy, bad string, report func(t *testing.T, m provider.Outbound, r provider.Result)) providertest.Instance {
	ms := providertest.NewMessages(domain.SMS)
	return providertest.Instance{Adapter: a, Accept: ms.Accept,
		Temporary: func() provider.Outbound { return ms.To(busy) },
		Permanent: func() provider.Outbound { return ms.To(bad) },
		Report:    report,
	}
}

// Serve hands req to a's callback receiver.
func Serve(typ provider.Type, a provider.Adapter, req *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	typ.Receiver(a).ServeHTTP(w, req)
	return w
}

// Clock is an adapter's clock and waits in a test: a wait is recorded and
// moves the clock on, never sleeps.
type Clock struct {
	mu    sync.Mutex
	at    time.Time
	waits []time.Duration
}

// NewClock is a Clock at at.
func NewClock(at time.Time) *Clock { return &Clock{at: at} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

// Sleep records d and moves the clock on by it.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	c.at = c.at.Add(d)
	return ctx.Err()
}

// Waits are the waits so far.
func (c *Clock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// Deps are a Client's dependencies on this clock, with no jitter (the
// shortest wait of each) and no log.
func (c *Clock) Deps() httpcall.Deps {
	return httpcall.Deps{Now: c.Now, Sleep: c.Sleep, Rand: func() float64 { return 0 }, Log: slog.New(slog.DiscardHandler)}
}

// StatusCase is one status of a platform's callback (and its error code)
// and the report it makes: Want "" for a state that is no report.
type StatusCase struct {
	Status, ErrorCode string
	Want              domain.Status
	Code              string
}

// Case is a StatusCase.
func Case(status, errorCode string, want domain.Status, code string) StatusCase {
	return StatusCase{Status: status, ErrorCode: errorCode, Want: want, Code: code}
}

// CheckStatuses delivers each case's callback for the message ref to a
// fresh adapter, and checks its answer (answered) and what its sink got.
func CheckStatuses(t *testing.T, ref string, answered int, cases []StatusCase,
	deliver func(c StatusCase) (*httptest.ResponseRecorder, *providertest.Sink)) {
	t.Helper()
	for _, c := range cases {
		w, sink := deliver(c)
		if w.Code != answered {
			t.Fatalf("%s: %d %s", c.Status, w.Code, w.Body)
		}
		got, _ := sink.Got()
		if c.Want == "" {
			if len(got) != 0 {
				t.Errorf("%s: reported %+v", c.Status, got)
			}
			continue
		}
		if len(got) != 1 || got[0].Ref != ref || got[0].Status != c.Want || got[0].ErrorCode != c.Code {
			t.Errorf("%s/%s: %+v, want %s %s", c.Status, c.ErrorCode, got, c.Want, c.Code)
		}
	}
}

// Peer is the address of the mock the variable env names; without it t
// is skipped, saying how to run it.
func Peer(t *testing.T, env, how string) string {
	t.Helper()
	base := os.Getenv(env)
	if base == "" {
		t.Skip("set " + env + " to " + how)
	}
	return base
}

// PeerDeps are the service's dependencies of an adapter sending to a
// mock: a sink, and a version for its User-Agent.
func PeerDeps() provider.Deps { return provider.Deps{Sink: &providertest.Sink{}, Version: "0.5.0-dev"} }

// Deps are a Client's dependencies sending through r, with no log.
func (r *Recorder) Deps() httpcall.Deps {
	return httpcall.Deps{HTTP: &http.Client{Transport: r}, Log: slog.New(slog.DiscardHandler)}
}

// SubmitOne hands m over as a live SMS through a, and checks that it was
// taken and that the mock found nothing wrong with what was sent.
func (r *Recorder) SubmitOne(t *testing.T, a provider.Provider, m provider.Outbound, ref func(string) bool) {
	t.Helper()
	m.Channel, m.Env = domain.SMS, domain.Live
	res := a.Submit(context.Background(), []provider.Outbound{m})
	if res[0].Err != nil || !ref(res[0].Ref) {
		t.Errorf("%+v %v", res[0], res[0].Err)
	}
	r.CheckOurs(t)
}

// Refuses sends req through r and checks that the mock refused it with
// status: the check of our requests can fail.
func (r *Recorder) Refuses(t *testing.T, req *http.Request, status int, what string) {
	t.Helper()
	resp, err := (&http.Client{Transport: r}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if a := r.Answers()[0]; a.Status != status {
		t.Fatalf("%s: %d %s", what, a.Status, a.Body)
	}
}
