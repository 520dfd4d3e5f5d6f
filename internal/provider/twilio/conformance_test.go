package twilio_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
	"github.com/msgsvc/msgsvc/internal/provider/twilio"
	"github.com/msgsvc/msgsvc/internal/provider/twilio/twiliotest"
)

const (
	testSID    = "AC0123456789abcdef0123456789abcdef"
	testToken  = "auth-token-for-tests"
	testPublic = "https://gw.example.com"
	busyTo     = "+447700900998" // the peer answers 503
	badTo      = "+447700900999" // 21211: invalid To
)

func TestConformance(t *testing.T) {
	typ := twilio.Type()
	providertest.Run(t, providertest.Harness{Name: "twilio-conformance", Type: typ,
		New: func(t *testing.T, sink provider.Sink) providertest.Instance {
			p := twiliotest.New(t)
			p.SetAnswer(func(f url.Values) (int, string, http.Header, bool) {
				switch f.Get("To") {
				case busyTo:
					return 503, `{"code":20503,"message":"Service unavailable"}`, nil, true
				case badTo:
					return 400, twiliotest.Error(21211, "The 'To' number is not a valid phone number."), nil, true
				}
				return 0, "", nil, false
			})
			cfg := twilio.Config{AccountSID: testSID, AuthToken: testToken, From: "+15017122661", APIURL: p.URL,
				PublicURL: testPublic, Tuning: httpcall.Tuning{RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond}}
			a, err := typ.Build(context.Background(), "twilio-conformance", cfg, provider.Deps{Sink: sink, Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			var seq atomic.Int64
			msg := func(to string) provider.Outbound {
				return provider.Outbound{ID: fmt.Sprintf("msg_%d", seq.Add(1)), To: to, Channel: domain.SMS, Body: "hello",
					Env: domain.Live, ExpiresAt: time.Now().Add(time.Hour)}
			}
			return providertest.Instance{Adapter: a,
				Accept:    func(i int) provider.Outbound { return msg(fmt.Sprintf("4477009%05d", i)) },
				Temporary: func() provider.Outbound { return msg(busyTo) },
				Permanent: func() provider.Outbound { return msg(badTo) },
				Report: func(t *testing.T, m provider.Outbound, r provider.Result) {
					w := callback(a, twilio.StatusPath, url.Values{"MessageSid": {r.Ref}, "MessageStatus": {"delivered"},
						"AccountSid": {testSID}, "To": {"+" + strings.TrimPrefix(m.To, "+")}}, testToken)
					if w.Code/100 != 2 {
						t.Fatalf("status callback answered %d: %s", w.Code, w.Body)
					}
				},
			}
		}})
}

// callback posts a form to the adapter's webhook at path, signed with
// token over the public URL ("" token: unsigned).
func callback(a provider.Adapter, path string, form url.Values, token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if token != "" {
		req.Header.Set("X-Twilio-Signature", twilio.Sign(token, testPublic+path, form))
	}
	w := httptest.NewRecorder()
	twilio.Type().Receiver(a).ServeHTTP(w, req)
	return w
}

func post(path string, form url.Values, sig string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if sig != "" {
		req.Header.Set("X-Twilio-Signature", sig)
	}
	return req
}

func serve(a provider.Adapter, req *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	twilio.Type().Receiver(a).ServeHTTP(w, req)
	return w
}
