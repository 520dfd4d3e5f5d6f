// Package httpcalltest helps the HTTP adapters' peer tests: a transport
// that keeps every answer a mock gave (with Prism's sl-violations header)
// and can drop the provider's base path, which Prism does not serve.
package httpcalltest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Recorder is an http.RoundTripper over http.DefaultTransport.
type Recorder struct {
	// Strip is a path prefix to drop before the request leaves ("/v2").
	Strip string
	// Respell, when set, rewrites the body before it leaves, for a
	// serialization the mock reads differently from the provider; the
	// test says why.
	Respell func(body []byte) []byte

	mu      sync.Mutex
	answers []Answer
}

// Answer is one exchange.
type Answer struct {
	Path       string
	Sent       []byte
	Status     int
	Body       string
	Violations []Violation
}

// Violation is one item of Prism's sl-violations header.
type Violation struct {
	Location []string `json:"location"`
	Severity string   `json:"severity"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
}

// InRequest reports whether the violation is in what we sent (not in
// the mock's own example answer).
func (v Violation) InRequest() bool { return len(v.Location) > 0 && v.Location[0] == "request" }

// RoundTrip sends req and keeps the answer.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var sent []byte
	if req.Body != nil {
		sent, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(sent))
	}
	if r.Respell != nil && sent != nil {
		sent = r.Respell(sent)
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(sent))
		req.ContentLength = int64(len(sent))
	}
	if r.Strip != "" {
		req = req.Clone(req.Context())
		req.URL.Path = strings.TrimPrefix(req.URL.Path, r.Strip)
		req.URL.RawPath = ""
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	a := Answer{Path: req.URL.Path, Sent: sent, Status: resp.StatusCode, Body: string(body)}
	if h := resp.Header.Get("sl-violations"); h != "" {
		_ = json.Unmarshal([]byte(h), &a.Violations)
	}
	r.mu.Lock()
	r.answers = append(r.answers, a)
	r.mu.Unlock()
	return resp, nil
}

// Answers are the exchanges so far.
func (r *Recorder) Answers() []Answer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Answer(nil), r.answers...)
}

// CheckOurs fails t for every exchange that was not a 2xx or that Prism
// found a violation in our request in, and logs violations in the mock's
// own answers (those are the document's, not ours). It fails when nothing
// was sent.
func (r *Recorder) CheckOurs(t testing.TB) {
	t.Helper()
	as := r.Answers()
	if len(as) == 0 {
		t.Fatal("nothing reached the mock")
	}
	for _, a := range as {
		if a.Status/100 != 2 {
			t.Errorf("%s %s: answered %d %s", a.Path, a.Sent, a.Status, a.Body)
		}
		for _, v := range a.Violations {
			if v.InRequest() {
				t.Errorf("%s %s: our request violates the document: %+v", a.Path, a.Sent, v)
			} else {
				t.Logf("%s: the mock's own answer violates the document (not ours): %s", a.Path, v.Message)
			}
		}
	}
}
