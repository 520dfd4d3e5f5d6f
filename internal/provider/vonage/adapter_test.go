package vonage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall/httpcalltest"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
	"github.com/msgsvc/msgsvc/internal/provider/vonage"
	"github.com/msgsvc/msgsvc/internal/provider/vonage/vonagetest"
)

var t0 = httpcalltest.T0

func newAdapter(t *testing.T, p *vonagetest.Server, tune func(*vonage.Config)) (*vonage.Adapter, *providertest.Sink) {
	t.Helper()
	a, sink, _ := open(t, p, tune)
	return a, sink
}

func open(t *testing.T, p *vonagetest.Server, tune func(*vonage.Config)) (*vonage.Adapter, *providertest.Sink, *httpcalltest.Clock) {
	t.Helper()
	return httpcalltest.Open(t, vonage.Config{APIKey: testKey, APISecret: testSecret, SignatureSecret: testSigSec,
		Account: httpcall.Account{From: "AcmeInc", APIURL: p.URL, Tuning: httpcalltest.Retrying}}, tune, vonage.New)
}

func sms(to, body string) provider.Outbound {
	return provider.Outbound{ID: "msg_01JD8Z9D5F7H9J1L3N5P7R9T1V", To: to, Channel: domain.SMS, Body: body, Env: domain.Live}
}

func TestSendsTheForm(t *testing.T) {
	p := vonagetest.New(t)
	a, _ := newAdapter(t, p, func(c *vonage.Config) { c.PublicURL = "https://gw.example.com" })
	for _, c := range []struct{ body, typ string }{{"Your code is 482913 {ok} €", "text"}, {"Olá, tudo bem? 👍", "unicode"}} {
		res := a.Submit(context.Background(), []provider.Outbound{sms("+447700900123", c.body)})
		if res[0].Err != nil || !strings.HasPrefix(res[0].Ref, "0A") {
			t.Fatalf("%+v %v", res[0], res[0].Err)
		}
	}
	f := p.Sends()[1]
	want := url.Values{"api_key": {testKey}, "api_secret": {testSecret}, "from": {"AcmeInc"}, "to": {"447700900123"},
		"text": {"Olá, tudo bem? 👍"}, "type": {"unicode"}, "client-ref": {"msg_01JD8Z9D5F7H9J1L3N5P7R9T1V"},
		"callback": {"https://gw.example.com/providers/vonage/status"}}
	if f.Encode() != want.Encode() {
		t.Errorf("form\n%s\nwant\n%s", f.Encode(), want.Encode())
	}
	if p.Sends()[0].Get("type") != "text" {
		t.Errorf("GSM text sent as %s", p.Sends()[0].Get("type"))
	}
	m := sms("447700900123", "pic")
	m.Content.Media = &domain.Media{URL: "https://cdn.acme.example/a.jpg"}
	if res := a.Submit(context.Background(), []provider.Outbound{m}); res[0].Err == nil || res[0].Err.Code != domain.CodeMediaError {
		t.Errorf("media: %+v", res[0].Err)
	}
}

func TestLongMessageHasParts(t *testing.T) {
	p := vonagetest.New(t)
	p.SetAnswer(func(url.Values) (int, string, http.Header, bool) {
		return 200, `{"message-count":"2","messages":[{"message-id":"0A01","status":"0"},{"message-id":"0A02","status":"0"}]}`, nil, true
	})
	a, _ := newAdapter(t, p, nil)
	res := a.Submit(context.Background(), []provider.Outbound{sms("447700900123", strings.Repeat("long ", 60))})
	if res[0].Err != nil || res[0].Ref != "0A01" || len(res[0].Parts) != 2 || res[0].Parts[1] != "0A02" {
		t.Fatalf("%+v", res[0])
	}
}

// The SMS API answers 200 to a refusal too; a refusal of the account
// leaves the adapter not ready.
func TestAnswersMapToErrors(t *testing.T) {
	ready, down := httpcalltest.Ready, httpcalltest.Down
	httpcalltest.CheckAnswers(t, []httpcalltest.AnswerCase{
		{Status: 200, Body: vonagetest.Refused("1", "6", "Unroutable"), Code: domain.CodeInvalidNumber, Health: ready},
		{Status: 200, Body: vonagetest.Refused("1", "15", "Illegal Sender Address"), Code: domain.CodeInvalidSender, Health: ready},
		{Status: 200, Body: vonagetest.Refused("1", "29", "Non White-listed Destination"), Code: domain.CodeRejected, Health: ready},
		{Status: 200, Body: vonagetest.Refused("1", "1", "Throttled"), Code: domain.CodeProviderError, Temporary: true, Health: ready},
		{Status: 200, Body: vonagetest.Refused("1", "4", "Bad Credentials"), Code: domain.CodeProviderError, Temporary: true, Health: down},
		{Status: 200, Body: vonagetest.Refused("1", "9", "Partner quota exceeded"), Code: domain.CodeProviderError, Temporary: true, Health: down},
		{Status: 429, Code: domain.CodeProviderError, Temporary: true, Health: ready},
		{Status: 502, Code: domain.CodeProviderError, Temporary: true, Health: ready},
	}, sms("447700900123", "hi"), vonagetest.New, func(p *vonagetest.Server) (provider.Adapter, *httpcalltest.Clock) {
		a, _, clock := open(t, p, nil)
		return a, clock
	})
}

func TestStatusMapping(t *testing.T) {
	c := httpcalltest.Case
	httpcalltest.CheckStatuses(t, "0A01", http.StatusNoContent, []httpcalltest.StatusCase{
		c("accepted", "0", domain.Sent, ""),
		c("buffered", "0", domain.Sent, ""),
		c("delivered", "0", domain.Delivered, ""),
		c("expired", "1", domain.Failed, domain.CodeExpired),
		c("failed", "9", domain.Failed, domain.CodeInvalidNumber),
		c("failed", "2", domain.Failed, domain.CodeUndelivered),
		c("failed", "", domain.Failed, domain.CodeUndelivered),
		c("rejected", "6", domain.Failed, domain.CodeRejected),
		c("rejected", "", domain.Failed, domain.CodeRejected),
		c("unknown", "1", domain.Failed, domain.CodeUnknown),
		c("something new", "0", "", ""),
	}, func(c httpcalltest.StatusCase) (*httptest.ResponseRecorder, *providertest.Sink) {
		a, sink := newAdapter(t, vonagetest.New(t), nil)
		return callback(a, vonage.StatusPath, receipt("0A01", "447700900123", c.Status, c.ErrorCode, t0), "md5hash", ""), sink
	})
}

// Every signature method of the dashboard is checked, for a form and for
// POST-JSON receipts.
func TestSignatureMethods(t *testing.T) {
	for _, method := range []string{"md5hash", "md5", "sha1", "sha256", "sha512"} {
		a, sink := newAdapter(t, vonagetest.New(t), func(c *vonage.Config) { c.SignatureMethod = method })
		if w := callback(a, vonage.StatusPath, receipt("0A01", "447700900123", "delivered", "0", t0), method, ""); w.Code != 204 {
			t.Errorf("%s: %d %s", method, w.Code, w.Body)
		}
		p := receipt("0A02", "447700900123", "delivered", "0", t0)
		p["sig"] = strings.ToUpper(vonage.Sign(p, testSigSec, method))
		body, _ := json.Marshal(p)
		req := httptest.NewRequest(http.MethodPost, vonage.StatusPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		a.Webhook().ServeHTTP(w, req)
		if w.Code != 204 {
			t.Errorf("%s JSON: %d %s", method, w.Code, w.Body)
		}
		if got, _ := sink.Got(); len(got) != 2 {
			t.Errorf("%s: %+v", method, got)
		}
	}
}

func TestInboundReachesTheSink(t *testing.T) {
	a, sink := newAdapter(t, vonagetest.New(t), nil)
	p := map[string]string{"msisdn": "447700900123", "to": "447700900000", "messageId": "0A0000001234567B", "text": "YES & = ok",
		"type": "text", "keyword": "YES", "message-timestamp": "2026-11-25 10:00:00", "timestamp": "1795600800", "nonce": "n1"}
	p["timestamp"] = strconv.FormatInt(t0.Unix(), 10)
	if w := callback(a, vonage.InboundPath, p, "md5hash", ""); w.Code != 204 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	_, in := sink.Got()
	if len(in) != 1 || in[0].From != "447700900123" || in[0].To != "447700900000" || in[0].Body != "YES & = ok" || in[0].Ref != "0A0000001234567B" {
		t.Fatalf("%+v", in)
	}
}

// A forged, unsigned, stale (replayed) or tampered callback is refused
// with 401 and records nothing.
func TestBadSignaturesAreRefused(t *testing.T) {
	a, sink := newAdapter(t, vonagetest.New(t), nil)
	fresh := func() map[string]string { return receipt("0A01", "447700900123", "delivered", "0", t0) }
	forged := fresh()
	forged["sig"] = vonage.Sign(forged, "not the secret", "md5hash")
	tampered := fresh()
	tampered["sig"] = vonage.Sign(tampered, testSigSec, "md5hash")
	tampered["status"] = "failed"
	wrongMethod := fresh()
	wrongMethod["sig"] = vonage.Sign(wrongMethod, testSigSec, "sha256")
	noTimestamp := fresh()
	delete(noTimestamp, "timestamp")
	for name, c := range map[string]struct {
		p   map[string]string
		sig string
	}{
		"unsigned":         {fresh(), "-"},
		"forged":           {forged, forged["sig"]},
		"tampered":         {tampered, tampered["sig"]},
		"wrong method":     {wrongMethod, wrongMethod["sig"]},
		"no timestamp":     {noTimestamp, ""},
		"stale (replayed)": {receipt("0A01", "447700900123", "delivered", "0", t0.Add(-6*time.Minute)), ""},
		"from the future":  {receipt("0A01", "447700900123", "delivered", "0", t0.Add(6*time.Minute)), ""},
	} {
		httpcalltest.Refused(t, name, callback(a, vonage.StatusPath, c.p, "md5hash", c.sig))
	}
	httpcalltest.NothingRecorded(t, sink)
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"MSGSVC_VONAGE_API_KEY": testKey, "MSGSVC_VONAGE_API_SECRET": testSecret,
		"MSGSVC_VONAGE_SIGNATURE_SECRET": testSigSec, "MSGSVC_VONAGE_FROM": "AcmeInc"}
	providertest.CheckShortcut(t, vonage.Type(), env, map[string]string{"MSGSVC_VONAGE_SIGNATURE_METHOD": "crc32"},
		func(s provider.Settings) bool { return s.(vonage.Config).From == "AcmeInc" }, "SignatureMethod")
	providertest.Names(t, vonage.Config{}.Validate(), "APIKey", "APISecret", "SignatureSecret", "From")
}
