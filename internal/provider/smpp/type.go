package smpp

import (
	"context"
	"fmt"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// TypeName is the provider type of SMPP in the configuration file.
const TypeName = "smpp"

// Type is SMPP as the provider registry knows it: an SMSC carrying SMS,
// configured by Config (a file's smpp block, or the MSGSVC_SMPP_*
// variables), which can be asked about lost receipts and wants its
// hand-overs recorded every few windows.
func Type() provider.Type {
	return provider.Define(provider.Spec[Config]{
		Name: TypeName, Channels: []domain.Channel{domain.SMS},
		Env: fromEnv, New: build,
	})
}

// What an SMPP provider offers beyond Submit: it can be asked about lost
// receipts, and wants its hand-overs recorded every few windows.
var (
	_ provider.Adapter = (*adapter)(nil)
	_ provider.Querier = (*adapter)(nil)
	_ provider.Chunker = (*adapter)(nil)
)

// fromEnv is the shortcut of one SMSC without a file: MSGSVC_SMPP_ADDR
// makes provider "smpp".
func fromEnv(getenv func(string) string) (Config, bool, error) {
	return provider.Shortcut(getenv, "MSGSVC_SMPP_ADDR", func(addr string, e *provider.Env) Config {
		return Config{Addr: addr, SystemID: e.String("MSGSVC_SMPP_SYSTEM_ID"), Password: e.String("MSGSVC_SMPP_PASSWORD"),
			SystemType: e.String("MSGSVC_SMPP_SYSTEM_TYPE"), Binds: e.Int("MSGSVC_SMPP_BINDS", 1),
			Window: e.Int("MSGSVC_SMPP_WINDOW", 10), TPS: float64(e.Int("MSGSVC_SMPP_TPS", 0)),
			SourceAddr: e.String("MSGSVC_SMPP_SOURCE_ADDR")}
	})
}

func build(_ context.Context, name string, c Config, d provider.Deps) (provider.Adapter, error) {
	c.Name = name
	client, err := New(c, d.Sink, provider.Options(d, WithLogger, nil, nil)...)
	if err != nil {
		return nil, err
	}
	return provider.Collected(d, client.Collector(), &adapter{Client: client})
}

// adapter is a Client as the service runs it: Start may be called again
// (it does nothing), and its health is one line for /readyz.
type adapter struct {
	*Client
	started provider.StartOnce
}

func (a *adapter) Start(ctx context.Context) error { return a.started.Start(ctx, a.Client.Start) }

func (a *adapter) Stop(ctx context.Context) error { return a.Close(ctx) }

func (a *adapter) Health() provider.Health {
	h := a.Client.Health()
	detail := fmt.Sprintf("binds up %d/%d, window in use %d/%d, throttled %d, resubmitted %d", h.BindsUp,
		h.BindsConfigured, h.WindowInUse, h.Window*max(h.BindsConfigured, 1), h.Throttled, h.Resubmitted)
	if h.LastError != "" {
		detail += ", last error: " + h.LastError
	}
	return provider.Health{Ready: h.Ready(), Detail: detail}
}
