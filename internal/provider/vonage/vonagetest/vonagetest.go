// Package vonagetest is a stand-in for Vonage's SMS API in tests: it takes
// POST /sms/json, answers 200 with status 0 and a fresh message-id, and
// can be told to answer otherwise.
package vonagetest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// Answer, when set, decides the answer to a send: ok false takes the
// default.
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

// Refused is the SMS API's answer refusing a message with status.
func Refused(to, status, text string) string {
	return fmt.Sprintf(`{"message-count":"1","messages":[{"to":%q,"status":%q,"error-text":%q}]}`, to, status, text)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost || r.URL.Path != "/sms/json" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	f := r.PostForm
	s.mu.Lock()
	s.sends = append(s.sends, f)
	s.seq++
	n, answer := s.seq, s.answer
	s.mu.Unlock()
	if answer != nil {
		if status, body, h, ok := answer(f); ok {
			for k, v := range h {
				w.Header()[k] = v
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
			return
		}
	}
	if f.Get("api_key") == "" || f.Get("api_secret") == "" {
		_, _ = io.WriteString(w, Refused(f.Get("to"), "2", "Missing api_key"))
		return
	}
	_, _ = fmt.Fprintf(w, `{"message-count":"1","messages":[{"to":%q,"message-id":"0A%014X","status":"0","remaining-balance":"3.14","message-price":"0.0333","network":"23410","client-ref":%q}]}`,
		f.Get("to"), n, f.Get("client-ref"))
}
