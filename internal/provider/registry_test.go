package provider_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
)

type fakeConfig struct {
	URL string `yaml:"url"`
}

func (c fakeConfig) Validate() error {
	if c.URL == "" {
		return &provider.FieldError{Type: "fake", Field: "URL", Msg: "is required"}
	}
	return nil
}

type fakeAdapter struct{ name string }

func (f fakeAdapter) Name() string { return f.name }
func (f fakeAdapter) Submit(_ context.Context, msgs []provider.Outbound) []provider.Result {
	return make([]provider.Result, len(msgs))
}
func (fakeAdapter) Start(context.Context) error { return nil }
func (fakeAdapter) Stop(context.Context) error  { return nil }
func (fakeAdapter) Health() provider.Health     { return provider.Health{Ready: true, Detail: "fine"} }
func (fakeAdapter) HandOverChunk() int          { return 7 }

var _ provider.Chunker = fakeAdapter{}

func fakeType(name string) provider.Type {
	return provider.Define(provider.Spec[fakeConfig]{Name: name, Channels: []domain.Channel{domain.SMS},
		Env: func(getenv func(string) string) (fakeConfig, bool, error) {
			e := provider.NewEnv(getenv)
			u := e.String("FAKE_URL")
			e.Int("FAKE_RATE", 0)
			return fakeConfig{URL: u}, u != "", e.Err()
		},
		New: func(_ context.Context, name string, c fakeConfig, d provider.Deps) (provider.Adapter, error) {
			return fakeAdapter{name: name}, nil
		}})
}

func TestRegistry(t *testing.T) {
	reg, err := provider.NewRegistry(fakeType("fake"), fakeType("other"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(reg.Names(), ","); got != "fake,other" {
		t.Fatalf("names %q: registration order expected", got)
	}
	if _, err := provider.NewRegistry(fakeType("fake"), fakeType("fake")); err == nil {
		t.Fatal("a type registered twice")
	}
	if err := reg.Add(fakeType("simulator")); err == nil {
		t.Fatal("the simulator's name taken by a type")
	}
	if err := reg.Add(provider.Define(provider.Spec[fakeConfig]{Name: "mute"})); err == nil {
		t.Fatal("a type that carries no channel registered")
	}
	if !typ0(reg).Carries(domain.SMS) || typ0(reg).Carries(domain.RCS) {
		t.Fatalf("channels %v", typ0(reg).Channels)
	}
	if err := reg.Add(provider.Type{Name: "bare"}); err == nil {
		t.Fatal("a type not made by Define registered")
	}

	typ, _ := reg.Type("fake")
	s, err := typ.Decode(func(into any) error { into.(*fakeConfig).URL = ""; return nil })
	var fe *provider.FieldError
	if !errors.As(err, &fe) || fe.Field != "URL" || s == nil {
		t.Fatalf("decode of an invalid block: %v, %v", s, err)
	}
	if _, ok, _ := typ.FromEnv(func(string) string { return "" }); ok {
		t.Fatal("environment shortcut set without its variables")
	}
	env := map[string]string{"FAKE_URL": "http://x", "FAKE_RATE": "fast"}
	if _, ok, err := typ.FromEnv(func(k string) string { return env[k] }); !ok || err == nil || !strings.Contains(err.Error(), "FAKE_RATE") {
		t.Fatalf("a malformed variable: ok %v, %v", ok, err)
	}
	if _, err := typ.Build(context.Background(), "f", fakeConfig{URL: "x"}, provider.Deps{}); err == nil {
		t.Fatal("built without a Sink")
	}
	a, err := typ.Build(context.Background(), "f", fakeConfig{URL: "x"}, provider.Deps{Sink: &providertest.Sink{}})
	if err != nil || a.Name() != "f" {
		t.Fatalf("build: %v, %v", a, err)
	}
	caps := provider.CapabilitiesOf(a)
	if caps.Chunker == nil || caps.ChunkSize() != 7 || caps.Querier != nil || caps.Revoker != nil || caps.Checker != nil {
		t.Fatalf("capabilities %+v", caps)
	}
}

func typ0(reg *provider.Registry) provider.Type { return reg.Types()[0] }

// hookAdapter is an adapter whose platform calls back.
type hookAdapter struct{ fakeAdapter }

func (hookAdapter) Webhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "took "+r.URL.Path) })
}

func hookType(doc string, routes ...provider.WebhookRoute) provider.Type {
	return provider.Define(provider.Spec[fakeConfig]{Name: "hook", Channels: []domain.Channel{domain.SMS},
		Webhooks: routes, OpenAPI: []byte(doc),
		New: func(_ context.Context, name string, c fakeConfig, d provider.Deps) (provider.Adapter, error) {
			return hookAdapter{fakeAdapter{name: name}}, nil
		}})
}

// A type's webhook routes are served on its adapter at their public paths,
// and the registry takes a type only when its OpenAPI path items describe
// exactly those routes.
func TestWebhookRoutes(t *testing.T) {
	status := provider.Receive(http.MethodPost, "status", hookAdapter.Webhook)
	typ := hookType(`{"/providers/hook/status": {"post": {}}}`, status)
	if _, err := provider.NewRegistry(typ); err != nil {
		t.Fatal(err)
	}
	a, _ := typ.Build(context.Background(), "h", fakeConfig{URL: "x"}, provider.Deps{Sink: &providertest.Sink{}})
	w := httptest.NewRecorder()
	typ.Receiver(a).ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/providers/hook/status", nil))
	if w.Code != http.StatusOK || w.Body.String() != "took /providers/hook/status" {
		t.Fatalf("POST status: %d %q", w.Code, w.Body)
	}
	if typ.PathOf(status) != "/providers/hook/status" {
		t.Fatalf("PathOf = %q", typ.PathOf(status))
	}
	both := hookType(`{"/providers/hook/status": {"post": {}}, "/providers/hook/in": {"post": {}}}`,
		provider.ReceiveAll(http.MethodPost, hookAdapter.Webhook, "status", "in")...)
	w = httptest.NewRecorder()
	both.Receiver(a).ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/providers/hook/in", nil))
	if _, err := provider.NewRegistry(both); err != nil || w.Body.String() != "took /providers/hook/in" {
		t.Fatalf("two paths of one receiver: %v, %d %q", err, w.Code, w.Body)
	}
	if status.Handler(fakeAdapter{name: "other"}) != nil {
		t.Fatal("a route answered on an adapter of another type")
	}
	for doc, routes := range map[string][]provider.WebhookRoute{
		`{"/providers/hook/status": {"get": {}}}`:                                      {status},
		`{"/providers/hook/status": {"post": {}}, "/providers/hook/in": {"post": {}}}`: {status},
		`{}`:       {status},
		`not json`: {status},
		`{"/providers/hook/status": {"post": {}}}`:  {{Method: "POST", Path: "status"}},
		`{"/providers/hook//status": {"post": {}}}`: {provider.Receive(http.MethodPost, "/status", hookAdapter.Webhook)},
	} {
		if _, err := provider.NewRegistry(hookType(doc, routes...)); err == nil {
			t.Errorf("registered routes %v described by %s", routes, doc)
		}
	}
}
