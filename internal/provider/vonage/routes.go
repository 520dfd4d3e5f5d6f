package vonage

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

// webhooks are where Vonage calls back: delivery receipts and inbound
// SMS, which its one receiver tells apart by path.
func webhooks() []provider.WebhookRoute {
	return []provider.WebhookRoute{
		provider.Receive(http.MethodPost, "status", (*Adapter).Webhook),
		provider.Receive(http.MethodPost, "inbound", (*Adapter).Webhook),
	}
}
