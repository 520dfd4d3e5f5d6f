package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// TypeName is the provider type of WhatsApp in the configuration file.
const TypeName = "whatsapp"

// Type is the WhatsApp Business Cloud API as the provider registry knows
// it: configured by Config (a file's whatsapp block, or the
// MSGSVC_WHATSAPP_* variables), receiving the platform's webhook.
func Type() provider.Type {
	return provider.Define(provider.Spec[Config]{
		Name: TypeName, Channels: []domain.Channel{domain.WhatsApp}, Decode: decodeFile, Env: fromEnv, New: build,
		// GET is the verification handshake, POST the notifications.
		Webhooks: []provider.WebhookRoute{
			provider.Receive(http.MethodGet, "webhook", adapter.Webhook),
			provider.Receive(http.MethodPost, "webhook", adapter.Webhook),
		},
		OpenAPI: openAPI,
	})
}

var _ provider.Adapter = adapter{}

// decodeFile reads a file's whatsapp block. There ratePerSecond may not be
// negative: "no cap" is for embedding and tests, while a deployment above
// the platform's rate only collects throttling answers.
func decodeFile(decode func(any) error) (Config, error) {
	var c Config
	if err := decode(&c); err != nil {
		return c, err
	}
	var errs []error
	if c.RatePerSecond < 0 {
		errs = append(errs, &provider.FieldError{Type: TypeName, Field: "RatePerSecond",
			Msg: "must be 0 (the platform's default, 80) or more"})
	}
	return c, errors.Join(append(errs, c.Validate())...)
}

// fromEnv is the shortcut of one business number without a file:
// MSGSVC_WHATSAPP_TOKEN makes provider "whatsapp".
func fromEnv(getenv func(string) string) (Config, bool, error) {
	return provider.Shortcut(getenv, "MSGSVC_WHATSAPP_TOKEN", func(tok string, e *provider.Env) Config {
		return Config{Token: tok, PhoneNumberID: e.String("MSGSVC_WHATSAPP_PHONE_NUMBER_ID"), Number: e.String("MSGSVC_WHATSAPP_NUMBER"),
			AppSecret: e.String("MSGSVC_WHATSAPP_APP_SECRET"), VerifyToken: e.String("MSGSVC_WHATSAPP_VERIFY_TOKEN"),
			APIURL: e.String("MSGSVC_WHATSAPP_API_URL")}
	})
}

func build(_ context.Context, name string, c Config, d provider.Deps) (provider.Adapter, error) {
	c.Name = name
	if c.UserAgent == "" {
		c.UserAgent = UserAgent(d.Version)
	}
	client, err := New(c, Deps{Sink: d.Sink, Files: d.Files, Cache: d.Cache}, provider.Options(d, WithLogger, WithClock, WithHTTPClient)...)
	if err != nil {
		return nil, err
	}
	return provider.Collected(d, client.Collector(), adapter{client})
}

// adapter is a Client as the service runs it, its health one line for
// /readyz.
type adapter struct{ *Client }

func (a adapter) Stop(ctx context.Context) error { return a.Close(ctx) }

func (a adapter) Health() provider.Health {
	h := a.Client.Health()
	detail := fmt.Sprintf("sent %d, refused %d, failed for now %d, retries %d, throttled %d, in flight %d, media uploaded %d, reused %d, webhooks %d, bad signatures %d",
		h.Sent, h.Refused, h.Failed, h.Retries, h.Throttled, h.InFlight, h.Uploads, h.Reused, h.Notifications, h.BadSignatures)
	if h.Down != "" {
		detail = "the platform refuses the token or account (" + h.Down + "): renew the token or fix the account; messages wait and retry; " + detail
	} else if h.LastError != "" {
		detail += ", last error: " + h.LastError
	}
	return provider.Health{Ready: h.Ready(), Detail: detail}
}
