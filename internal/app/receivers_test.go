package app

import (
	"context"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Receivers that misbehave once: each event must still be delivered, with
// the failed attempt recorded as what it was. A delivery succeeds on a 2xx
// within 5 seconds; 3xx are not followed; anything else is retried.
func TestMisbehavingReceivers(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 5 s delivery timeout")
	}
	e := newEnv(t, "sqlite", envOptions{retrySchedule: "100ms,100ms,100ms"})
	ctx := context.Background()
	var mu sync.Mutex
	first := map[string]bool{} // path → already misbehaved
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wh, _ := standardwebhooks.NewWebhook(e.account.WebhookSecret)
		mu.Lock()
		again := first[r.URL.Path]
		first[r.URL.Path] = true
		mu.Unlock()
		switch {
		case r.URL.Path == "/in-time":
			// The receiver's own delay, not a wait for an outcome: 4.8 s keeps a
			// margin under the 5 s limit for a machine busy with other tests.
			time.Sleep(4800 * time.Millisecond)
		case again:
		case r.URL.Path == "/too-slow":
			time.Sleep(5100 * time.Millisecond)
		case r.URL.Path == "/redirect":
			http.Redirect(w, r, "/elsewhere", http.StatusPermanentRedirect)
			return
		case r.URL.Path == "/busy":
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		case r.URL.Path == "/reset":
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		body, _ := io.ReadAll(r.Body)
		if wh == nil || wh.Verify(body, r.Header) != nil {
			w.WriteHeader(http.StatusBadRequest) // a bad signature would fail the test
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	cases := []struct {
		path      string
		attempts  int
		firstCode int    // the first attempt's recorded status (0: no answer)
		firstErr  string // a regular expression its recorded error matches
	}{
		{"/in-time", 1, 204, ""},
		{"/too-slow", 2, 0, "deadline|Timeout"},
		{"/redirect", 2, 308, "308"},
		{"/busy", 2, 503, "503"},
		{"/reset", 2, 0, "EOF"},
	}
	mids := map[string]string{}
	for _, c := range cases {
		r := send(t, e, e.testKey, map[string]any{"to": "5511999990001", "message": "x", "type": "SMS", "callbackUrl": srv.URL + c.path})
		mids[c.path] = r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
	}
	for _, c := range cases {
		var ev domain.Event
		polltest.For(t, c.path+" delivered", 30*time.Second, func() bool {
			evs, _ := e.st.EventsForMessage(ctx, e.account.ID, mids[c.path])
			if len(evs) == 1 {
				ev = evs[0]
			}
			return ev.State == domain.EventDelivered
		})
		atts, err := e.st.Attempts(ctx, ev.ID)
		if err != nil || len(atts) != c.attempts {
			t.Fatalf("%s: attempts %+v (%v), want %d", c.path, atts, err, c.attempts)
		}
		a := atts[0]
		if a.StatusCode != c.firstCode || !regexp.MustCompile(c.firstErr).MatchString(a.Error) {
			t.Errorf("%s: first attempt %d %q, want %d with %q", c.path, a.StatusCode, a.Error, c.firstCode, c.firstErr)
		}
	}
}
