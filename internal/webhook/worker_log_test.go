package webhook

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

type secretStore struct{ Store }

func (secretStore) Account(context.Context, string) (domain.Account, error) {
	return domain.Account{WebhookSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, nil
}

// A failed delivery leaves a line an operator sees, with what went wrong
// and what comes next, and nothing secret: not the path or query of the
// callback (integrators put tokens there), not the signing secret.
func TestFailedDeliveriesAreLogged(t *testing.T) {
	status := http.StatusInternalServerError
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
	defer rcv.Close()
	var buf bytes.Buffer
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	w := NewWorker(WorkerConfig{Store: secretStore{}, Sender: NewSender(SenderOptions{ClientOptions: ClientOptions{AllowPrivate: true}}), Schedule: Schedule{time.Minute},
		Log: slog.New(slog.NewTextHandler(&buf, nil)), Now: func() time.Time { return now }, Rand: func() float64 { return 0.5 }})
	ev := domain.Event{ID: "evt_1", AccountID: "acc_1", Event: "delivery_status", URL: rcv.URL + "/hooks/secret-path?token=t0ps3cret",
		Body: `{"event":"delivery_status"}`}

	cases := []struct {
		name     string
		status   int
		attempts int
		want     []string
	}{
		{"retried", 500, 0, []string{"level=WARN", "retrying", "event=evt_1", "type=delivery_status", "status=500",
			"attempt=1", "nextAttempt=2026-11-23T10:01"}},
		{"exhausted", 503, 1, []string{"level=ERROR", "used up", "status=503", "attempt=2"}},
		{"gone", 410, 0, []string{"level=WARN", "410 Gone", "status=410"}},
	}
	for _, c := range cases {
		buf.Reset()
		status = c.status
		ev.Attempts = c.attempts
		w.deliver(context.Background(), ev)
		line := buf.String()
		for _, want := range append(c.want, "host="+strings.TrimPrefix(rcv.URL, "http://")) {
			if !strings.Contains(line, want) {
				t.Errorf("%s: log %q lacks %q", c.name, line, want)
			}
		}
		for _, secret := range []string{"secret-path", "t0ps3cret", "whsec_", "MfKQ9r8G", "v1,"} {
			if strings.Contains(line, secret) {
				t.Errorf("%s: log %q shows %q", c.name, line, secret)
			}
		}
	}
	// A connection error names the error, still without the URL.
	buf.Reset()
	rcv.Close()
	w.deliver(context.Background(), ev)
	if line := buf.String(); !strings.Contains(line, "error=") || strings.Contains(line, "secret-path") {
		t.Errorf("connection error: %q", line)
	}
}
