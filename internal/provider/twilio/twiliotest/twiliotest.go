// Package twiliotest is a stand-in for Twilio's Messages API in tests: it
// takes the create form, answers 201 with a fresh message SID, and can be
// told to answer otherwise.
package twiliotest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Answer, when set, decides the answer to a send: ok false takes the
// default (201 and a new SID).
type Answer func(form url.Values) (status int, body string, header http.Header, ok bool)

// Server is the stand-in.
type Server struct {
	URL string

	mu     sync.Mutex
	sends  []url.Values
	answer Answer
	seq    int
}

// New starts a stand-in, stopped when t ends.
func New(t testing.TB) *Server {
	s := &Server{}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// SetAnswer replaces the answer hook.
func (s *Server) SetAnswer(a Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer = a
}

// Sends are the forms received, in order.
func (s *Server) Sends() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.sends...)
}

// Error is Twilio's error body.
func Error(code int, msg string) string {
	return fmt.Sprintf(`{"code":%d,"message":%q,"more_info":"https://www.twilio.com/docs/errors/%d","status":400}`, code, msg, code)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	sid, _, ok := r.BasicAuth()
	if !ok || r.Method != http.MethodPost || r.URL.Path != "/2010-04-01/Accounts/"+sid+"/Messages.json" {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(Error(20003, "Authenticate")))
		return
	}
	if err := r.ParseForm(); err != nil || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.sends = append(s.sends, r.PostForm)
	s.seq++
	n, answer := s.seq, s.answer
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if answer != nil {
		if status, body, h, ok := answer(r.PostForm); ok {
			for k, v := range h {
				w.Header()[k] = v
			}
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
			return
		}
	}
	w.WriteHeader(http.StatusCreated)
	_, _ = fmt.Fprintf(w, `{"sid":"SM%032x","status":"queued","to":%q,"account_sid":%q}`, n, r.PostForm.Get("To"), sid)
}
