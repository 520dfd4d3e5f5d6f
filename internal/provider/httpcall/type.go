package httpcall

import (
	"context"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Receiver is an SMS adapter over HTTP as its Type sees it: an adapter
// whose one receiver takes every callback path of its platform.
type Receiver interface {
	provider.Adapter
	Webhook() http.Handler
}

// Kind is what the registry knows of an SMS adapter package over HTTP,
// whose adapters A are configured by C, which embeds Account (P is *C:
// the registry names the provider through it).
type Kind[C provider.Settings, P Named[C], A Receiver] struct {
	// Name is the type's name in the configuration file.
	Name string
	// Shortcut is the variable that, set, makes the environment's one
	// provider of the type, which Env configures from its value and the
	// other variables.
	Shortcut string
	Env      func(v string, e *provider.Env) C
	// New makes an adapter of a configuration that holds the provider's
	// name.
	New func(C, provider.Deps, Deps) (A, error)
	// Paths are the callback paths (under /providers/<Name>/) the
	// adapter's receiver takes POSTs at, which OpenAPI describes.
	Paths   []string
	OpenAPI []byte
}

// Named is a pointer to a configuration that embeds Account.
type Named[C any] interface {
	*C
	setName(string)
}

// Type is the registry's Type of the kind: SMS, configured by a file's
// block or the shortcut.
func (k Kind[C, P, A]) Type() provider.Type {
	return provider.Define(provider.Spec[C]{Name: k.Name, Channels: []domain.Channel{domain.SMS},
		Env: func(getenv func(string) string) (C, bool, error) { return provider.Shortcut(getenv, k.Shortcut, k.Env) },
		New: func(_ context.Context, name string, c C, d provider.Deps) (provider.Adapter, error) {
			P(&c).setName(name)
			return k.New(c, d, DepsOf(d))
		},
		Webhooks: provider.ReceiveAll(http.MethodPost, func(a A) http.Handler { return a.Webhook() }, k.Paths...),
		OpenAPI:  k.OpenAPI})
}
