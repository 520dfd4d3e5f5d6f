// Package telnyxtest is a stand-in for Telnyx's messages API in tests: it
// takes POST /v2/messages, answers 200 with a fresh message id, and can
// be told to answer otherwise.
package telnyxtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/provider/httpcall/httpcalltest"
)

// Server is the stand-in.
type Server = httpcalltest.Fake[map[string]any]

// New starts a stand-in, stopped when t ends.
func New(t testing.TB) *Server { return httpcalltest.Start[map[string]any](t, platform{}) }

// Error is Telnyx's error body.
func Error(code, title string) string {
	return fmt.Sprintf(`{"errors":[{"code":%q,"title":%q,"detail":%q}]}`, code, title, title)
}

type platform struct{}

func (platform) Read(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	if r.Method != http.MethodPost || r.URL.Path != "/v2/messages" || !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, Error("10009", "Authentication failed"))
		return nil, false
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

func (platform) Accept(w http.ResponseWriter, _ *http.Request, body map[string]any, n int) {
	_, _ = fmt.Fprintf(w, `{"data":{"record_type":"message","direction":"outbound","id":"40385f64-5717-4562-b3fc-%012x","type":%q,"to":[{"phone_number":%q,"status":"queued"}]}}`,
		n, body["type"], body["to"])
}
