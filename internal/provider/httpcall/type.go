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
// whose adapters A are configured by C.
type Kind[C provider.Settings, A Receiver] struct {
	// Name is the type's name in the configuration file.
	Name string
	// Shortcut is the variable that, set, makes the environment's one
	// provider of the type, which Env configures from its value and the
	// other variables.
	Shortcut string
	Env      func(v string, e *provider.Env) C
	// New makes an adapter of a configuration that Named has given the
	// provider's name.
	New   func(C, provider.Deps, Deps) (A, error)
	Named func(c C, name string) C
	// Paths are the callback paths (under /providers/<Name>/) the
	// adapter's receiver takes POSTs at, which OpenAPI describes.
	Paths   []string
	OpenAPI []byte
}

// Type is the registry's Type of the kind: SMS, configured by a file's
// block or the shortcut.
func (k Kind[C, A]) Type() provider.Type {
	return provider.Define(provider.Spec[C]{Name: k.Name, Channels: []domain.Channel{domain.SMS},
		Env: func(getenv func(string) string) (C, bool, error) { return provider.Shortcut(getenv, k.Shortcut, k.Env) },
		New: func(_ context.Context, name string, c C, d provider.Deps) (provider.Adapter, error) {
			return k.New(k.Named(c, name), d, DepsOf(d))
		},
		Webhooks: provider.ReceiveAll(http.MethodPost, func(a A) http.Handler { return a.Webhook() }, k.Paths...),
		OpenAPI:  k.OpenAPI})
}
