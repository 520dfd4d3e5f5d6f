package httpcalltest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Reply, when set, decides the answer to a send of body: ok false takes
// the platform's default.
type Reply[T any] func(body T) (status int, resp string, header http.Header, ok bool)

// Platform is what a stand-in knows of its platform's send API.
type Platform[T any] interface {
	// Read takes a send's body, or answers the refusal itself (ok false).
	Read(w http.ResponseWriter, r *http.Request) (body T, ok bool)
	// Accept answers the n-th send (from 1) as the platform does.
	Accept(w http.ResponseWriter, r *http.Request, body T, n int)
}

// Fake is a stand-in for a platform's send API in tests: it keeps every
// send's body, answers as the platform does, and can be told to answer
// otherwise.
type Fake[T any] struct {
	URL string

	p      Platform[T]
	mu     sync.Mutex
	sends  []T
	answer Reply[T]
	seq    int
}

// Start starts a stand-in of p, stopped when t ends.
func Start[T any](t testing.TB, p Platform[T]) *Fake[T] {
	f := &Fake[T]{p: p}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// SetAnswer replaces the answer hook.
func (f *Fake[T]) SetAnswer(a Reply[T]) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answer = a
}

// Sends are the bodies received, in order.
func (f *Fake[T]) Sends() []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]T(nil), f.sends...)
}

func (f *Fake[T]) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	body, ok := f.p.Read(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	f.sends = append(f.sends, body)
	f.seq++
	n, answer := f.seq, f.answer
	f.mu.Unlock()
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
	f.p.Accept(w, r, body, n)
}

// Canned is an answer a stand-in is told to give.
type Canned struct {
	Status int
	Body   string
}

// AnswerTo makes the stand-in answer a send whose key (its recipient) is
// in answers with that answer, and the others as the platform does.
func (f *Fake[T]) AnswerTo(key func(body T) string, answers map[string]Canned) {
	f.SetAnswer(func(body T) (int, string, http.Header, bool) {
		c, ok := answers[key(body)]
		return c.Status, c.Body, nil, ok
	})
}
