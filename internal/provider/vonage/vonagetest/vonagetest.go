// Package vonagetest is a stand-in for Vonage's SMS API in tests: it takes
// POST /sms/json, answers 200 with status 0 and a fresh message-id, and
// can be told to answer otherwise.
package vonagetest

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/msgsvc/msgsvc/internal/provider/httpcall/httpcalltest"
)

// Server is the stand-in.
type Server = httpcalltest.Fake[url.Values]

// New starts a stand-in, stopped when t ends.
func New(t testing.TB) *Server { return httpcalltest.Start[url.Values](t, platform{}) }

// Refused is the SMS API's answer refusing a message with status.
func Refused(to, status, text string) string {
	return fmt.Sprintf(`{"message-count":"1","messages":[{"to":%q,"status":%q,"error-text":%q}]}`, to, status, text)
}

type platform struct{}

func (platform) Read(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost || r.URL.Path != "/sms/json" {
		w.WriteHeader(http.StatusNotFound)
		return nil, false
	}
	return r.PostForm, true
}

// Accept refuses a send without credentials, as the API does, after the
// answer hook has had its say.
func (platform) Accept(w http.ResponseWriter, _ *http.Request, f url.Values, n int) {
	if f.Get("api_key") == "" || f.Get("api_secret") == "" {
		_, _ = io.WriteString(w, Refused(f.Get("to"), "2", "Missing api_key"))
		return
	}
	_, _ = fmt.Fprintf(w, `{"message-count":"1","messages":[{"to":%q,"message-id":"0A%014X","status":"0","remaining-balance":"3.14","message-price":"0.0333","network":"23410","client-ref":%q}]}`,
		f.Get("to"), n, f.Get("client-ref"))
}
