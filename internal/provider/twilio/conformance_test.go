package twilio_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall/httpcalltest"
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
	httpcalltest.Conformance(t, twilio.Type(), httpcalltest.Stand[url.Values]{Start: twiliotest.New,
		Key: func(f url.Values) string { return f.Get("To") }, Busy: busyTo, Bad: badTo, Answers: map[string]httpcalltest.Canned{
			busyTo: {Status: 503, Body: `{"code":20503,"message":"Service unavailable"}`},
			badTo:  {Status: 400, Body: twiliotest.Error(21211, "The 'To' number is not a valid phone number.")},
		}}, func(url string) provider.Settings {
		return twilio.Config{AccountSID: testSID, AuthToken: testToken,
			Account: httpcall.Account{From: "+15017122661", APIURL: url, PublicURL: testPublic, Tuning: httpcalltest.Fast}}
	}, func(t *testing.T, a provider.Adapter, m provider.Outbound, r provider.Result) {
		w := callback(a, twilio.StatusPath, url.Values{"MessageSid": {r.Ref}, "MessageStatus": {"delivered"},
			"AccountSid": {testSID}, "To": {"+" + strings.TrimPrefix(m.To, "+")}}, testToken)
		if w.Code/100 != 2 {
			t.Fatalf("status callback answered %d: %s", w.Code, w.Body)
		}
	})
}

// callback posts a form to the adapter's webhook at path, signed with
// token over the public URL ("" token: unsigned).
func callback(a provider.Adapter, path string, form url.Values, token string) *httptest.ResponseRecorder {
	sig := ""
	if token != "" {
		sig = twilio.Sign(token, testPublic+path, form)
	}
	return httpcalltest.Serve(twilio.Type(), a, post(path, form, sig))
}

func post(path string, form url.Values, sig string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if sig != "" {
		req.Header.Set("X-Twilio-Signature", sig)
	}
	return req
}
