package app

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"sync"
	"testing"
)

// trafficEnv names the file that a test run appends every request and
// response to, one JSON object a line, together with every webhook the
// receiver is posted. CI validates that file against the OpenAPI document
// with an independent validator (internal/api/openapi/testdata); unset, no
// traffic is kept.
const trafficEnv = "MSGSVC_TEST_TRAFFIC"

// exchange is one recorded request and its response, or one webhook as
// posted (Kind "webhook": Body is what msgsvc sent).
type exchange struct {
	Kind                string `json:"kind"`
	Test                string `json:"test"`
	Method              string `json:"method,omitempty"`
	Path                string `json:"path,omitempty"`
	Query               string `json:"query,omitempty"`
	RequestContentType  string `json:"requestContentType,omitempty"`
	RequestBody         string `json:"requestBody,omitempty"`
	Status              int    `json:"status,omitempty"`
	ResponseContentType string `json:"responseContentType,omitempty"`
	ResponseBody        string `json:"responseBody,omitempty"`
	Allow               string `json:"allow,omitempty"`
	Body                string `json:"body,omitempty"`
}

var trafficMu sync.Mutex // one line at a time from parallel tests

func recordExchange(t *testing.T, x exchange) {
	path := os.Getenv(trafficEnv)
	if path == "" {
		return
	}
	x.Test = t.Name()
	line, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	trafficMu.Lock()
	defer trafficMu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
}

// recorder is an http.RoundTripper that records what goes through it.
type recorder struct {
	t    *testing.T
	next http.RoundTripper
}

func recordTraffic(t *testing.T, next http.RoundTripper) http.RoundTripper {
	if os.Getenv(trafficEnv) == "" {
		return next
	}
	return &recorder{t: t, next: next}
}

func (rec *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		reqBody = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := rec.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	recordExchange(rec.t, exchange{Kind: "http", Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery,
		RequestContentType: req.Header.Get("Content-Type"), RequestBody: string(reqBody),
		Status: resp.StatusCode, ResponseContentType: resp.Header.Get("Content-Type"), ResponseBody: string(respBody),
		Allow: resp.Header.Get("Allow")})
	return resp, nil
}

// CloseIdleConnections passes on to the transport, which the node's
// graceful shutdown in tests relies on.
func (rec *recorder) CloseIdleConnections() {
	if c, ok := rec.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
