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

// SMSType is the registry's Type of an SMS adapter over HTTP named typ:
// configured by C (a file's block, or the shortcut env reads), made by
// open under the name the configuration gives it, its receiver taking the
// platform's POSTs at each of paths (under /providers/<typ>/), which
// openAPI describes.
func SMSType[C provider.Settings, A Receiver](typ string, env func(getenv func(string) string) (C, bool, error),
	open func(name string, c C, d provider.Deps) (A, error), openAPI []byte, paths ...string) provider.Type {
	return provider.Define(provider.Spec[C]{Name: typ, Channels: []domain.Channel{domain.SMS}, Env: env,
		New: func(_ context.Context, name string, c C, d provider.Deps) (provider.Adapter, error) {
			return open(name, c, d)
		},
		Webhooks: provider.ReceiveAll(http.MethodPost, func(a A) http.Handler { return a.Webhook() }, paths...),
		OpenAPI:  openAPI})
}
