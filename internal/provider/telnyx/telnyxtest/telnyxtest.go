// Package telnyxtest is a stand-in for Telnyx's messages API in tests: it
// takes POST /v2/messages, answers 200 with a fresh message id, and can
// be told to answer otherwise.
package telnyxtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Answer, when set, decides the answer to a send: ok false takes the
// default (200 and a new id).
type Answer func(body map[string]any) (status int, resp string, header http.Header, ok bool)

// Server is the stand-in.
type Server struct {
	URL string

	mu     sync.Mutex
	sends  []map[string]any
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

// Sends are the bodies received, in order.
func (s *Server) Sends() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.sends...)
}

// Error is Telnyx's error body.
func Error(code, title string) string {
	return fmt.Sprintf(`{"errors":[{"code":%q,"title":%q,"detail":%q}]}`, code, title, title)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodPost || r.URL.Path != "/v2/messages" || !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, Error("10009", "Authentication failed"))
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.sends = append(s.sends, body)
	s.seq++
	n, answer := s.seq, s.answer
	s.mu.Unlock()
	if answer != nil {
		if status, resp, h, ok := answer(body); ok {
			for k, v := range h {
				w.Header()[k] = v
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, resp)
			return
		}
	}
	_, _ = fmt.Fprintf(w, `{"data":{"record_type":"message","direction":"outbound","id":"40385f64-5717-4562-b3fc-%012x","type":%q,"to":[{"phone_number":%q,"status":"queued"}]}}`,
		n, body["type"], body["to"])
}
