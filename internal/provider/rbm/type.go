package rbm

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// TypeName is the provider type of RBM in the configuration file.
const TypeName = "rbm"

// Type is RCS Business Messaging as the provider registry knows it: an
// agent carrying RCS, configured by Config (a file's rbm block, or the
// MSGSVC_RBM_* variables), which can check devices, take messages back
// and receives the platform's webhook.
func Type() provider.Type {
	return provider.Define(provider.Spec[Config]{
		Name: TypeName, Channels: []domain.Channel{domain.RCS}, Env: fromEnv, New: build,
		Webhooks: []provider.WebhookRoute{
			provider.Receive(http.MethodPost, "webhook", (*adapter).Webhook),
		},
		OpenAPI: openAPI,
	})
}

// What an RBM provider offers beyond Submit: it checks devices for RCS and
// takes messages back.
var (
	_ provider.Adapter           = (*adapter)(nil)
	_ provider.CapabilityChecker = (*adapter)(nil)
	_ provider.Revoker           = (*adapter)(nil)
)

// fromEnv is the shortcut of one agent without a file:
// MSGSVC_RBM_AGENT_ID makes provider "rbm".
func fromEnv(getenv func(string) string) (Config, bool, error) {
	return provider.Shortcut(getenv, "MSGSVC_RBM_AGENT_ID", func(agent string, e *provider.Env) Config {
		return Config{AgentID: agent, CredentialsFile: e.String("MSGSVC_RBM_CREDENTIALS"), APIURL: e.String("MSGSVC_RBM_API_URL"),
			ClientToken: e.String("MSGSVC_RBM_CLIENT_TOKEN"), RatePerSecond: float64(e.Int("MSGSVC_RBM_RATE_PER_SECOND", 0)),
			FallbackAfter: e.Duration("MSGSVC_RBM_FALLBACK_AFTER")}
	})
}

func build(_ context.Context, name string, c Config, d provider.Deps) (provider.Adapter, error) {
	c.Name = name
	if len(c.Credentials) == 0 {
		key, err := os.ReadFile(c.CredentialsFile)
		if err != nil {
			return nil, fmt.Errorf("read the service-account key: %w", err)
		}
		c.Credentials = key
	}
	opts := append([]Option{WithFiles(d.Files), WithMediaCache(d.Cache)}, provider.Options(d, WithLogger, WithClock, WithHTTPClient)...)
	a, err := New(c, d.Sink, opts...)
	if err != nil {
		return nil, err
	}
	return provider.Collected(d, a.Collector(), &adapter{Adapter: a})
}

// adapter is an Adapter as the service runs it: the credentials are
// checked at the first Start only, and its health is one line for /readyz.
type adapter struct {
	*Adapter
	started provider.StartOnce
}

func (a *adapter) Start(ctx context.Context) error { return a.started.Start(ctx, a.Adapter.Start) }

func (a *adapter) Stop(ctx context.Context) error { return a.Close(ctx) }

func (a *adapter) Health() provider.Health {
	h := a.Adapter.Health()
	detail := "credentials not checked yet"
	switch {
	case h.AuthError != "":
		detail = "credentials refused: " + h.AuthError
	case h.Checked:
		detail = "credentials accepted"
	}
	if h.LastError != "" && h.LastError != h.AuthError {
		detail += ", last error: " + h.LastError
	}
	return provider.Health{Ready: h.Ready(), Detail: detail}
}
