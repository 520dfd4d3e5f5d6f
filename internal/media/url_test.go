package media_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/media"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// Refusals that need no network: the URL's form and literal addresses.
func TestCheckURLRefusesWithoutProbing(t *testing.T) {
	c := media.NewURLChecker(media.URLOptions{Client: &http.Client{Transport: failTransport{t}}})
	tests := []struct{ url, channel, wantErr string }{
		{"http://example.com/a.jpg", "WHATSAPP", "https"},
		{"ftp://example.com/a.jpg", "RCS", "https"},
		{"example.com/a.jpg", "RCS", "https"},
		{"https://127.0.0.1/a.jpg", "WHATSAPP", "public address"},
		{"https://[::1]/a.jpg", "WHATSAPP", "public address"},
		{"https://10.1.2.3/a.jpg", "RCS", "public address"},
		{"https://192.168.0.10:8443/a.jpg", "RCS", "public address"},
		{"https://169.254.169.254/latest/meta-data", "RCS", "public address"},
		{"https://[::ffff:127.0.0.1]/a.jpg", "RCS", "public address"},
		{"https://localhost/a.jpg", "WHATSAPP", "public address"},
		{"https://2130706433/a.jpg", "WHATSAPP", "not a valid hostname"},
		{"https://user:pw@example.com/a.jpg", "WHATSAPP", "user info"},
		{"https://example.com/a.jpg", "SMS", "SMS messages cannot carry media"},
	}
	for _, tc := range tests {
		_, err := c.Check(context.Background(), tc.url, tc.channel)
		var re *media.RuleError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("Check(%s, %s) = %v, want a RuleError with %q", tc.url, tc.channel, err, tc.wantErr)
		}
	}
}

type failTransport struct{ t *testing.T }

func (f failTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	f.t.Errorf("probed %s although the URL should have been refused first", r.URL)
	return nil, errors.New("no")
}

// The default client refuses at connect time a host that resolves inside;
// the checker must report that as a refusal, not as "unreachable".
func TestCheckURLDialRefusal(t *testing.T) {
	c := media.NewURLChecker(media.URLOptions{Client: &http.Client{Transport: errTransport{
		fmt.Errorf("dial: %w: 10.0.0.1 (private)", webhook.ErrNotPublic)}}})
	_, err := c.Check(context.Background(), "https://inside.example.com/a.jpg", "RCS")
	if err == nil || !strings.Contains(err.Error(), "private address") {
		t.Fatalf("got %v, want a refusal of the private address", err)
	}
	// Any other failure to connect leaves the check to the provider.
	c = media.NewURLChecker(media.URLOptions{Client: &http.Client{Transport: errTransport{errors.New("connection refused")}}})
	info, err := c.Check(context.Background(), "https://down.example.com/a.jpg", "RCS")
	if err != nil || info.Probed {
		t.Fatalf("unreachable host: %+v, %v; want accepted unprobed", info, err)
	}
}

type errTransport struct{ err error }

func (e errTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, e.err }

// The probe: a TLS test server on loopback, allowed only by AllowPrivate.
func TestCheckURLProbe(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodHead {
			t.Errorf("probe used %s", r.Method)
		}
		q := r.URL.Query()
		if ct := q.Get("type"); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		if n := q.Get("size"); n != "" {
			w.Header().Set("Content-Length", n)
		}
		status, _ := strconv.Atoi(q.Get("status"))
		if status == 0 {
			status = 200
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	c := media.NewURLChecker(media.URLOptions{AllowPrivate: true, Client: srv.Client(), Timeout: 5 * time.Second})
	mb := strconv.Itoa(media.MB)
	tests := []struct {
		name, query, channel string
		wantErr              string // empty when accepted
		wantMIME             string
		wantProbed           bool
	}{
		{"jpeg on whatsapp", "type=image/jpeg&size=1000", "WHATSAPP", "", "image/jpeg", true},
		{"image/jpg alias", "type=image/jpg&size=1000", "WHATSAPP", "", "image/jpeg", true},
		{"gif on rcs", "type=image/gif&size=1000", "RCS", "", "image/gif", true},
		{"gif on whatsapp", "type=image/gif&size=1000", "WHATSAPP", "does not accept GIF", "image/gif", true},
		{"image too large", "type=image/png&size=" + mb + "0", "WHATSAPP", "limited to 5 MB", "image/png", true},
		{"webp", "type=image/webp&size=10", "RCS", "does not accept image/webp", "", true},
		{"web page", "type=text/html%3B+charset%3Dutf-8&size=10", "RCS", "web page", "", true},
		{"unknown type, small", "type=application/octet-stream&size=100", "RCS", "", "", true},
		{"unknown type, huge", "type=application/octet-stream&size=" + strconv.Itoa(11*media.MB), "RCS", "limited to 10 MB", "", true},
		{"not found", "status=404", "RCS", "answered 404", "", false},
		{"gone", "status=410", "WHATSAPP", "answered 410", "", false},
		{"head not allowed", "status=405", "WHATSAPP", "", "", false},
		{"server error", "status=503", "WHATSAPP", "", "", false},
		{"redirect is not followed", "status=302", "WHATSAPP", "", "", false},
	}
	for _, tc := range tests {
		info, err := c.Check(context.Background(), srv.URL+"/f?"+tc.query, tc.channel)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.wantErr)
		}
		if info.MIME != tc.wantMIME || info.Probed != tc.wantProbed {
			t.Errorf("%s: info %+v, want MIME %q probed %v", tc.name, info, tc.wantMIME, tc.wantProbed)
		}
	}

	// Without AllowPrivate the same loopback server is never contacted.
	strict := media.NewURLChecker(media.URLOptions{Client: srv.Client()})
	if _, err := strict.Check(context.Background(), srv.URL+"/f", "RCS"); err == nil || !strings.Contains(err.Error(), "public address") {
		t.Fatalf("loopback accepted without AllowPrivate: %v", err)
	}
	// NoProbe checks the form only.
	quiet := media.NewURLChecker(media.URLOptions{AllowPrivate: true, NoProbe: true, Client: &http.Client{Transport: failTransport{t}}})
	if info, err := quiet.Check(context.Background(), srv.URL+"/f?status=404", "RCS"); err != nil || info.Probed {
		t.Fatalf("NoProbe: %+v, %v", info, err)
	}
}

// Without an injected client the checker builds its own; it does not trust
// the test server's certificate, so the probe fails, which is no refusal.
func TestCheckURLDefaultClient(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the expected handshake failure
	srv.StartTLS()
	defer srv.Close()
	c := media.NewURLChecker(media.URLOptions{AllowPrivate: true, Timeout: 2 * time.Second})
	info, err := c.Check(context.Background(), srv.URL+"/f", "RCS")
	if err != nil || info.Probed {
		t.Fatalf("got %+v, %v; want accepted unprobed", info, err)
	}
}
