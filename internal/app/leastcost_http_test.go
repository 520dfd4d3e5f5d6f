package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/provider/telnyx/telnyxtest"
	"github.com/msgsvc/msgsvc/internal/provider/vonage/vonagetest"
)

// The Telnyx public key the stand-in's callbacks would be checked with
// (32 bytes, base64); no callback is posted here.
const leastCostTelnyxKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

// A least-cost route between Telnyx and Vonage sends each message through
// the provider whose rate card is cheapest for its destination, and the
// message records that provider and what it cost. With
// MSGSVC_TEST_TELNYX_API_URL and MSGSVC_TEST_VONAGE_API_URL set (CI: the
// platforms' own OpenAPI documents served by Prism) the requests go to
// those; otherwise to this repository's stand-ins, which also show what
// each platform received.
func TestLeastCostBetweenTelnyxAndVonagePeer(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		telnyxURL, vonageURL := os.Getenv("MSGSVC_TEST_TELNYX_API_URL"), os.Getenv("MSGSVC_TEST_VONAGE_API_URL")
		var tx *telnyxtest.Server
		var vn *vonagetest.Server
		if telnyxURL == "" || vonageURL == "" {
			tx, vn = telnyxtest.New(t), vonagetest.New(t)
			telnyxURL, vonageURL = tx.URL, vn.URL
		} else {
			// The documents' servers end in /v2 and /sms, which the adapters
			// put in each request's path: Prism serves what follows.
			telnyxURL, vonageURL = stripping(t, telnyxURL, "/v2"), stripping(t, vonageURL, "/sms")
		}
		yaml := fmt.Sprintf(`currency: USD
providers:
  - name: telnyx
    type: telnyx
    costs: {"44": 0.040, "4470": 0.020}
    telnyx: {apiKey: KEYexample, publicKey: %q, from: "+18445550001", apiUrl: %q}
  - name: vonage
    type: vonage
    costs: {"44": 0.030}
    vonage: {apiKey: abcd1234, apiSecret: secret, signatureSecret: sigsecret, from: "447700900000", apiUrl: %q}
routes:
  - name: uk-cheapest
    channel: SMS
    countries: ["44"]
    strategy: least-cost
    providers: [telnyx, vonage]
`, leastCostTelnyxKey, telnyxURL, vonageURL)
		e := newEnv(t, d, envOptions{credits: 100, file: yaml})
		ctx := context.Background()
		cases := []struct {
			to, provider string
			cost         int64 // micro-dollars
		}{
			{"447800900123", "vonage", 30_000}, // 44: Vonage 0.030 beats Telnyx 0.040
			{"447000900123", "telnyx", 20_000}, // 4470: Telnyx 0.020 beats Vonage's 44 at 0.030
		}
		for _, c := range cases {
			mid := msgID(t, send(t, e, e.liveKey, map[string]any{"to": c.to, "message": "Your code is 482913", "type": "SMS"}), 0)
			finalStatus(t, e, e.liveKey, mid, "SENT")
			m, err := e.st.MessageByID(ctx, mid)
			if err != nil {
				t.Fatal(err)
			}
			if m.Provider != c.provider || m.Route != "uk-cheapest" || m.Cost != c.cost || m.CostCurrency != "USD" || m.ProviderRef == "" {
				t.Fatalf("to %s: provider %q route %q cost %d %s ref %q; want %s at %d USD", c.to, m.Provider, m.Route, m.Cost,
					m.CostCurrency, m.ProviderRef, c.provider, c.cost)
			}
		}
		if tx != nil {
			if s := tx.Sends(); len(s) != 1 || s[0]["to"] != "+447000900123" {
				t.Fatalf("Telnyx received %v", s)
			}
			if s := vn.Sends(); len(s) != 1 || s[0].Get("to") != "447800900123" {
				t.Fatalf("Vonage received %v", s)
			}
		}
	})
}

// stripping is a proxy to base that drops prefix from each request's path.
func stripping(t *testing.T, base, prefix string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.URL.Path = strings.TrimPrefix(r.URL.Path, prefix)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
