package telnyx_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall/httpcalltest"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
	"github.com/msgsvc/msgsvc/internal/provider/telnyx"
	"github.com/msgsvc/msgsvc/internal/provider/telnyx/telnyxtest"
)

var t0 = httpcalltest.T0

func newAdapter(t *testing.T, p *telnyxtest.Server, tune func(*telnyx.Config)) (*telnyx.Adapter, *providertest.Sink, *httpcalltest.Clock) {
	t.Helper()
	return httpcalltest.Open(t, telnyx.Config{APIKey: "KEYtest", PublicKey: publicKey(),
		Account: httpcall.Account{From: "+18445550001", APIURL: p.URL, Tuning: httpcalltest.Retrying}}, tune, telnyx.New)
}

func sms(to string) provider.Outbound {
	return provider.Outbound{ID: "msg_1", To: to, Channel: domain.SMS, Body: "Your code is 482913", Env: domain.Live}
}

func TestSendsTheMessageBody(t *testing.T) {
	p := telnyxtest.New(t)
	a, _, _ := newAdapter(t, p, func(c *telnyx.Config) {
		c.From, c.MessagingProfileID, c.PublicURL = "", "abc85f64-5717-4562-b3fc-2c9600000000", "https://gw.example.com/"
	})
	m := sms("447700900123")
	m.Content.Media = &domain.Media{URL: "https://cdn.acme.example/a.jpg"}
	res := a.Submit(context.Background(), []provider.Outbound{m})
	if res[0].Err != nil || res[0].Ref == "" {
		t.Fatalf("%+v %v", res[0], res[0].Err)
	}
	got, _ := json.Marshal(p.Sends()[0])
	want := `{"media_urls":["https://cdn.acme.example/a.jpg"],"messaging_profile_id":"abc85f64-5717-4562-b3fc-2c9600000000",` +
		`"text":"Your code is 482913","to":"+447700900123","type":"MMS","webhook_url":"https://gw.example.com/providers/telnyx/webhook"}`
	if string(got) != want {
		t.Errorf("body\n%s\nwant\n%s", got, want)
	}
	m = sms("447700900123")
	m.Content.Media = &domain.Media{MediaID: "med_1"}
	if res := a.Submit(context.Background(), []provider.Outbound{m}); res[0].Err == nil || res[0].Err.Code != domain.CodeMediaError {
		t.Errorf("uploaded media: %+v", res[0].Err)
	}
}

// A 429 waits Retry-After's 2s first.
func TestAnswersMapToErrors(t *testing.T) {
	httpcalltest.CheckAnswers(t, []httpcalltest.AnswerCase{
		{Status: 400, Body: telnyxtest.Error("40310", "Invalid 'to' address"), Code: domain.CodeInvalidNumber, Attempts: 1},
		{Status: 400, Body: telnyxtest.Error("40305", "Invalid 'from' address"), Code: domain.CodeInvalidSender, Attempts: 1},
		{Status: 400, Body: telnyxtest.Error("40300", "Blocked due to STOP"), Code: domain.CodeRejected, Attempts: 1},
		{Status: 422, Body: telnyxtest.Error("10015", "Bad request"), Code: domain.CodeRejected, Attempts: 1},
		{Status: 401, Body: telnyxtest.Error("10009", "Authentication failed"), Code: domain.CodeProviderError, Temporary: true, Attempts: 3},
		{Status: 429, Body: telnyxtest.Error("10011", "Too many requests"), Header: http.Header{"Retry-After": {"2"}},
			Code: domain.CodeProviderError, Temporary: true, Waited: 2 * time.Second},
		{Status: 500, Code: domain.CodeProviderError, Temporary: true, Attempts: 3},
	}, sms("447700900123"), telnyxtest.New, func(p *telnyxtest.Server) (provider.Adapter, *httpcalltest.Clock) {
		a, _, clock := newAdapter(t, p, nil)
		return a, clock
	})
}

func TestStatusMapping(t *testing.T) {
	c := httpcalltest.Case
	httpcalltest.CheckStatuses(t, "m-1", http.StatusOK, []httpcalltest.StatusCase{
		c("sent", "", domain.Sent, ""),
		c("delivered", "", domain.Delivered, ""),
		c("delivery_unconfirmed", "", domain.Sent, ""),
		c("delivery_failed", "40008", domain.Failed, domain.CodeUndelivered),
		c("delivery_failed", "40001", domain.Failed, domain.CodeInvalidNumber),
		c("delivery_failed", "", domain.Failed, domain.CodeUndelivered),
		c("sending_failed", "40010", domain.Failed, domain.CodeInvalidSender),
		c("sending_failed", "99999", domain.Failed, domain.CodeRejected),
		c("expired", "", domain.Failed, domain.CodeExpired),
		c("queued", "", "", ""),
		c("sending", "", "", ""),
	}, func(c httpcalltest.StatusCase) (*httptest.ResponseRecorder, *providertest.Sink) {
		a, sink, _ := newAdapter(t, telnyxtest.New(t), nil)
		return deliver(a, finalized("m-1", "447700900123", c.Status, c.ErrorCode), t0), sink
	})
}

func TestInboundReachesTheSink(t *testing.T) {
	a, sink, _ := newAdapter(t, telnyxtest.New(t), nil)
	body := `{"data":{"event_type":"message.received","id":"ev-2","record_type":"event","payload":{"id":"in-1","direction":"inbound",` +
		`"from":{"phone_number":"+5511999990001"},"to":[{"phone_number":"+18445550001","status":"webhook_delivered"}],"text":"YES",` +
		`"media":[{"url":"https://media.telnyx.example/1.jpg"}]}}}`
	if w := deliver(a, body, t0); w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	_, in := sink.Got()
	if len(in) != 1 || in[0].From != "5511999990001" || in[0].To != "18445550001" || in[0].Ref != "in-1" ||
		in[0].Body != "YES\nhttps://media.telnyx.example/1.jpg" {
		t.Fatalf("%+v", in)
	}
}

// A forged, unsigned, stale (replayed) or tampered webhook is refused with
// 401 and records nothing.
func TestBadSignaturesAreRefused(t *testing.T) {
	a, sink, _ := newAdapter(t, telnyxtest.New(t), nil)
	body := finalized("m-1", "447700900123", "delivered", "")
	ts := strconv.FormatInt(t0.Unix(), 10)
	other := ed25519.NewKeyFromSeed([]byte("another-account-seed-for-tests-2"))
	stale := strconv.FormatInt(t0.Add(-6*time.Minute).Unix(), 10)
	future := strconv.FormatInt(t0.Add(6*time.Minute).Unix(), 10)
	for name, req := range map[string]*http.Request{
		"unsigned":          post(body, "", ""),
		"no timestamp":      post(body, "", telnyx.Sign(testKey, ts, []byte(body))),
		"forged":            post(body, ts, telnyx.Sign(other, ts, []byte(body))),
		"stale (replayed)":  post(body, stale, telnyx.Sign(testKey, stale, []byte(body))),
		"from the future":   post(body, future, telnyx.Sign(testKey, future, []byte(body))),
		"timestamp changed": post(body, strconv.FormatInt(t0.Unix()+1, 10), telnyx.Sign(testKey, ts, []byte(body))),
		"body changed":      post(strings.Replace(body, "delivered", "delivery_failed", 1), ts, telnyx.Sign(testKey, ts, []byte(body))),
		"not base64":        post(body, ts, "%%%"),
	} {
		httpcalltest.Refused(t, name, httpcalltest.Serve(telnyx.Type(), a, req))
	}
	httpcalltest.NothingRecorded(t, sink)
	if w := deliver(a, body, t0.Add(-4*time.Minute)); w.Code != 200 {
		t.Errorf("4 minutes old: %d %s", w.Code, w.Body)
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"MSGSVC_TELNYX_API_KEY": "KEY1", "MSGSVC_TELNYX_PUBLIC_KEY": publicKey(),
		"MSGSVC_TELNYX_MESSAGING_PROFILE_ID": "prof-1"}
	providertest.CheckShortcut(t, telnyx.Type(), env, map[string]string{"MSGSVC_TELNYX_PUBLIC_KEY": "bm90IGEga2V5"},
		func(s provider.Settings) bool { return s.(telnyx.Config).MessagingProfileID == "prof-1" }, "PublicKey")
	providertest.Names(t, telnyx.Config{}.Validate(), "APIKey", "PublicKey", "From")
}
