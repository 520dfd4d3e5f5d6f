package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/api/openapi"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/builtin"
)

// registryWebhooks are provider types (the build's when types is nil);
// running holds the adapter that receives each type's calls (none by
// default).
type registryWebhooks struct {
	types   []provider.Type
	running map[string]provider.Adapter
}

func (r registryWebhooks) Types() []provider.Type {
	if r.types == nil {
		return builtin.Types()
	}
	return r.types
}

func (r registryWebhooks) Receiver(kind string) provider.Adapter {
	if a, ok := r.running[kind]; ok {
		return a
	}
	return nil
}

// TestRoutesMatchOpenAPI keeps the served routes and the published
// document in step: every documented operation is served, and every
// served route (but the documents themselves) is documented.
func TestRoutesMatchOpenAPI(t *testing.T) {
	s := New(Config{ProviderWebhooks: registryWebhooks{}})
	served := map[string]bool{}
	for _, p := range s.Routes() {
		served[p] = true
	}
	documented := map[string]bool{}
	for _, op := range openapi.Operations(builtin.Types()) {
		key := strings.ToUpper(op.Method) + " " + op.Path
		documented[key] = true
		if !served[key] {
			t.Errorf("documented but not served: %s", key)
		}
	}
	var extra []string
	for p := range served {
		if !documented[p] && p != "GET /openapi.json" && p != "GET /docs" {
			extra = append(extra, p)
		}
	}
	sort.Strings(extra)
	for _, p := range extra {
		t.Errorf("served but not documented: %s", p)
	}
}

// hookAdapter is an adapter whose platform calls back: it answers a
// webhook call with its path.
type hookAdapter struct{}

func (hookAdapter) Webhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("took " + r.URL.Path)) })
}

func (hookAdapter) Name() string { return "hook" }
func (hookAdapter) Submit(_ context.Context, m []provider.Outbound) []provider.Result {
	return make([]provider.Result, len(m))
}
func (hookAdapter) Start(context.Context) error { return nil }
func (hookAdapter) Stop(context.Context) error  { return nil }
func (hookAdapter) Health() provider.Health     { return provider.Health{Ready: true} }

// A provider's webhook route is served whatever runs: by the adapter of
// its type when the node runs one, else 404 as a problem.
func TestProviderWebhookRoutes(t *testing.T) {
	s := New(Config{ProviderWebhooks: registryWebhooks{}})
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/providers/vonage/status", strings.NewReader("a=b")))
	var p struct{ Code, Detail string }
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || w.Code != http.StatusNotFound || p.Code != "NOT_FOUND" ||
		!strings.Contains(p.Detail, "vonage") {
		t.Fatalf("no vonage provider: %d %s", w.Code, w.Body)
	}
	// An adapter of another kind than the route's type takes nothing.
	s = New(Config{ProviderWebhooks: registryWebhooks{running: map[string]provider.Adapter{"twilio": hookAdapter{}}}})
	w = httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/providers/twilio/status", strings.NewReader("a=b")))
	if w.Code != http.StatusNotFound {
		t.Fatalf("a route answered by an adapter not of its type: %d %s", w.Code, w.Body)
	}
	hook := provider.Define(provider.Spec[noSettings]{Name: "hook", Channels: []domain.Channel{domain.SMS},
		Webhooks: []provider.WebhookRoute{provider.Receive(http.MethodPost, "in", hookAdapter.Webhook)},
		OpenAPI:  []byte(`{"/providers/hook/in": {"post": {}}}`)})
	s = New(Config{ProviderWebhooks: registryWebhooks{types: []provider.Type{hook},
		running: map[string]provider.Adapter{"hook": hookAdapter{}}}})
	w = httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/providers/hook/in", nil))
	if w.Code != http.StatusOK || w.Body.String() != "took /providers/hook/in" {
		t.Fatalf("the running adapter's receiver: %d %s", w.Code, w.Body)
	}
	if !slices.Contains(s.Routes(), "POST /providers/hook/in") {
		t.Fatalf("routes %v", s.Routes())
	}
}

type noSettings struct{}

func (noSettings) Validate() error { return nil }
