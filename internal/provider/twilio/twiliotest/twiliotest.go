// Package twiliotest is a stand-in for Twilio's Messages API in tests: it
// takes the create form, answers 201 with a fresh message SID, and can be
// told to answer otherwise.
package twiliotest

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/provider/httpcall/httpcalltest"
)

// Server is the stand-in.
type Server = httpcalltest.Fake[url.Values]

// New starts a stand-in, stopped when t ends.
func New(t testing.TB) *Server { return httpcalltest.Start[url.Values](t, platform{}) }

// Error is Twilio's error body.
func Error(code int, msg string) string {
	return fmt.Sprintf(`{"code":%d,"message":%q,"more_info":"https://www.twilio.com/docs/errors/%d","status":400}`, code, msg, code)
}

type platform struct{}

func (platform) Read(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	sid, _, ok := r.BasicAuth()
	if !ok || r.Method != http.MethodPost || r.URL.Path != "/2010-04-01/Accounts/"+sid+"/Messages.json" {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(Error(20003, "Authenticate")))
		return nil, false
	}
	if err := r.ParseForm(); err != nil || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		w.WriteHeader(http.StatusBadRequest)
		return nil, false
	}
	return r.PostForm, true
}

func (platform) Accept(w http.ResponseWriter, r *http.Request, f url.Values, n int) {
	sid, _, _ := r.BasicAuth()
	w.WriteHeader(http.StatusCreated)
	_, _ = fmt.Fprintf(w, `{"sid":"SM%032x","status":"queued","to":%q,"account_sid":%q}`, n, f.Get("To"), sid)
}
