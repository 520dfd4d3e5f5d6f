package whatsapp

import (
	_ "embed"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/provider"
)

// openAPI holds the OpenAPI path items of webhooks, published in the
// service's document (internal/api/openapi) as they are written here.
//
//go:embed openapi.json
var openAPI []byte

// webhooker is what serves the webhook: the adapter the type builds and
// the one its tests build alike.
type webhooker interface{ Webhook() http.Handler }

// webhooks are where the platform calls: the verification handshake
// (GET) and notifications (POST), both taken by the Client's receiver.
func webhooks() []provider.WebhookRoute {
	return []provider.WebhookRoute{
		provider.Receive(http.MethodGet, "webhook", webhooker.Webhook),
		provider.Receive(http.MethodPost, "webhook", webhooker.Webhook),
	}
}
