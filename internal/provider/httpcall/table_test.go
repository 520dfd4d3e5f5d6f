package httpcall

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
)

func TestStatusesOf(t *testing.T) {
	def := DefaultStatuses()
	for status, want := range map[int]Verdict{200: Read, 201: Read, 400: Read, 404: Read, 401: Unauthorized, 429: RateLimited,
		500: Transient, 503: Transient, 302: Transient, 101: Transient} {
		if got := def.Of(status); got != want {
			t.Errorf("Of(%d) = %v, want %v", status, got, want)
		}
	}
	if got := (Statuses{403: Unauthorized, 501: Read}).Of(501); got != Read {
		t.Errorf("a listed 5xx: %v", got)
	}
}

func TestCodesRefusal(t *testing.T) {
	c := Codes[string]{Ours: map[string]string{"6": domain.CodeInvalidNumber}, Temporary: map[string]bool{"1": true},
		Credentials: map[string]bool{"4": true}}
	for code, want := range map[string]struct {
		ours      string
		temporary bool
	}{"6": {domain.CodeInvalidNumber, false}, "1": {domain.CodeProviderError, true}, "4": {domain.CodeProviderError, true},
		"99": {domain.CodeRejected, false}} {
		e := c.Refusal("Peer", code, "why")
		if e.Code != want.ours || e.Temporary != want.temporary {
			t.Errorf("code %s: %+v", code, e)
		}
	}
	if e := c.Refusal("Peer", "4", "why"); !strings.Contains(e.Message, refusesCredentials) {
		t.Errorf("credentials refused: %q", e.Message)
	}
	if got := c.Of("7", domain.CodeUndelivered); got != domain.CodeUndelivered {
		t.Errorf("unlisted code: %s", got)
	}
}

// Exchange sends the header and the body it is given, and reads at most
// MaxAnswer of the answer.
func TestExchange(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPut || r.Header.Get("Authorization") != "Bearer k" || string(b) != "hello" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, strings.Repeat("x", MaxAnswer+10))
	}))
	defer srv.Close()
	a, err := Exchange(context.Background(), srv.Client(), 0, Request{Method: http.MethodPut, URL: srv.URL,
		Header: http.Header{"Authorization": {"Bearer k"}}, Open: func() (io.Reader, error) { return strings.NewReader("hello"), nil }})
	if err != nil || a.Status != 200 || len(a.Body) != MaxAnswer {
		t.Fatalf("%v %d %d", err, a.Status, len(a.Body))
	}
	if _, err := Exchange(context.Background(), srv.Client(), 0, Request{URL: "://bad"}); !IsBadRequest(err) {
		t.Errorf("a URL that does not parse: %v", err)
	}
}
