package telnyx

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

// webhooks are where Telnyx posts its messaging webhooks.
func webhooks() []provider.WebhookRoute {
	return []provider.WebhookRoute{
		provider.Receive(http.MethodPost, "webhook", (*Adapter).Webhook),
	}
}
