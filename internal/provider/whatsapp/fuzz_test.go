package whatsapp

import (
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// FuzzParse: no notification body makes the parser panic, and whatever it
// reports is well formed: statuses name a message and a delivery step,
// replies a sender on the WhatsApp channel.
func FuzzParse(f *testing.F) {
	at := time.Unix(1750000000, 0)
	f.Add(business.Status("wamid.A", "failed", "5511999990000", at, 131047, "Re-engagement message"))
	f.Add(business.Message("5511999990000", at, map[string]any{"type": "image", "image": map[string]any{"id": "1", "caption": "c"}}))
	f.Add(business.Message("5511999990000", at, map[string]any{"type": "interactive", "interactive": map[string]any{"type": "list_reply", "list_reply": map[string]any{"id": "r"}}}))
	f.Add([]byte(`{"object":"whatsapp_business_account","entry":[{"changes":[{"field":"messages","value":{"statuses":[{"id":"x","status":"read","timestamp":"-1"}]}}]}]}`))
	f.Add([]byte(`{"object":"whatsapp_business_account","entry":[{"changes":[{"field":"messages","value":{"messages":[{"from":"1","type":"location","location":{}}]}}]}]}`))
	// A sender with no digit in it: not a reply anyone can answer.
	f.Add([]byte(`{"object":"whatsapp_business_account","entry":[{"changes":[{"field":"messages","value":{"messages":[{"from":"+","type":"interactive","interactive":{}}]}}]}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := parse(body, "https://graph.example/v23.0", at)
		if err != nil {
			return
		}
		for _, s := range p.statuses {
			if s.Ref == "" || s.At.IsZero() || (s.Status == domain.Failed) != (s.ErrorCode != "") {
				t.Fatalf("status %+v", s)
			}
		}
		for _, in := range p.inbound {
			if in.From == "" || in.Channel != domain.WhatsApp || in.At.IsZero() {
				t.Fatalf("reply %+v", in)
			}
		}
	})
}
