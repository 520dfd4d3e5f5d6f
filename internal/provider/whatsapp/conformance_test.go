package whatsapp_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
	"github.com/msgsvc/msgsvc/internal/provider/whatsapp"
	"github.com/msgsvc/msgsvc/internal/provider/whatsapp/whatsapptest"
)

const (
	conformanceSecret = "appsecret-conformance"
	conformancePhone  = "106540352242922"
	busyTo            = "447700900998" // the platform answers 503
	notOnWhatsAppTo   = "447700900999" // 131026: not on WhatsApp
)

func TestConformance(t *testing.T) {
	typ := whatsapp.Type()
	providertest.Run(t, providertest.Harness{Name: "whatsapp-conformance", Type: typ,
		New: func(t *testing.T, sink provider.Sink) providertest.Instance {
			p := whatsapptest.New(t)
			p.SetAnswer(func(r whatsapptest.Request) (int, string, bool) {
				switch to, _ := r.JSON()["to"].(string); strings.TrimPrefix(to, "+") {
				case busyTo:
					return 503, whatsapptest.Error(1, "Service temporarily unavailable"), true
				case notOnWhatsAppTo:
					return 400, whatsapptest.Error(131026, "Message undeliverable"), true
				}
				return 0, "", false
			})
			cfg := whatsapp.Config{APIURL: p.URL, PhoneNumberID: conformancePhone, Token: "token-conformance",
				AppSecret: conformanceSecret, VerifyToken: "verify-conformance", RatePerSecond: -1,
				RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond}
			a, err := typ.Build(context.Background(), "whatsapp-conformance", cfg, providertest.Quiet(sink))
			if err != nil {
				t.Fatal(err)
			}
			ms := providertest.NewMessages(domain.WhatsApp)
			return providertest.Instance{Adapter: a, Accept: ms.Accept,
				Temporary: func() provider.Outbound { return ms.To(busyTo) },
				Permanent: func() provider.Outbound { return ms.To(notOnWhatsAppTo) },
				Report: func(t *testing.T, m provider.Outbound, r provider.Result) {
					b := whatsapptest.Business{DisplayPhoneNumber: "15550783881", PhoneNumberID: conformancePhone}
					notifyWhatsApp(t, a, b.Status(r.Ref, "delivered", m.To, time.Now(), 0, ""))
				},
			}
		}})
}

// notifyWhatsApp posts a signed notification to the adapter's webhook.
func notifyWhatsApp(t *testing.T, a provider.Adapter, body []byte) {
	t.Helper()
	mac := hmac.New(sha256.New, []byte(conformanceSecret))
	mac.Write(body)
	req := httptest.NewRequest(http.MethodPost, "/providers/whatsapp/webhook", bytes.NewReader(body))
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	w := httptest.NewRecorder()
	whatsapp.Type().Receiver(a).ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("webhook answered %d: %s", w.Code, w.Body)
	}
}
