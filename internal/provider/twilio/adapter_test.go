package twilio_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall/httpcalltest"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
	"github.com/msgsvc/msgsvc/internal/provider/twilio"
	"github.com/msgsvc/msgsvc/internal/provider/twilio/twiliotest"
)

func newAdapter(t *testing.T, p *twiliotest.Server, tune func(*twilio.Config)) (*twilio.Adapter, *providertest.Sink, *httpcalltest.Clock) {
	t.Helper()
	return httpcalltest.Open(t, twilio.Config{AccountSID: testSID, AuthToken: testToken,
		Account: httpcall.Account{From: "+15017122661", APIURL: p.URL, PublicURL: testPublic, Tuning: httpcalltest.Retrying}}, tune, twilio.New)
}

func sms(to string) provider.Outbound {
	return provider.Outbound{ID: "msg_1", To: to, Channel: domain.SMS, Body: "Your code is 482913", Env: domain.Live}
}

func TestSendsTheCreateForm(t *testing.T) {
	p := twiliotest.New(t)
	a, _, _ := newAdapter(t, p, func(c *twilio.Config) { c.MessagingServiceSID = "MG0123456789abcdef0123456789abcdef" })
	m := sms("447700900123")
	m.Content.Media = &domain.Media{URL: "https://cdn.acme.example/a.jpg"}
	res := a.Submit(context.Background(), []provider.Outbound{m})
	if res[0].Err != nil || !strings.HasPrefix(res[0].Ref, "SM") {
		t.Fatalf("%+v %v", res[0], res[0].Err)
	}
	f := p.Sends()[0]
	want := url.Values{"To": {"+447700900123"}, "From": {"+15017122661"}, "Body": {"Your code is 482913"},
		"MediaUrl": {"https://cdn.acme.example/a.jpg"}, "MessagingServiceSid": {"MG0123456789abcdef0123456789abcdef"},
		"StatusCallback": {testPublic + "/providers/twilio/status"}}
	if f.Encode() != want.Encode() {
		t.Errorf("form\n%s\nwant\n%s", f.Encode(), want.Encode())
	}
}

func TestUploadedMediaIsRefused(t *testing.T) {
	p := twiliotest.New(t)
	a, _, _ := newAdapter(t, p, nil)
	m := sms("447700900123")
	m.Content.Media = &domain.Media{MediaID: "med_1"}
	res := a.Submit(context.Background(), []provider.Outbound{m})
	if res[0].Err == nil || res[0].Err.Code != domain.CodeMediaError || res[0].Err.Temporary {
		t.Fatalf("%+v", res[0].Err)
	}
	if len(p.Sends()) != 0 {
		t.Error("a message with uploaded media reached Twilio")
	}
}

// A refusal of the credentials (401) also leaves the adapter not ready.
func TestAnswersMapToErrors(t *testing.T) {
	httpcalltest.CheckAnswers(t, []httpcalltest.AnswerCase{
		{Status: 400, Body: twiliotest.Error(21211, "invalid To"), Code: domain.CodeInvalidNumber, Attempts: 1},
		{Status: 400, Body: twiliotest.Error(21606, "From not SMS capable"), Code: domain.CodeInvalidSender, Attempts: 1},
		{Status: 400, Body: twiliotest.Error(21610, "unsubscribed"), Code: domain.CodeRejected, Attempts: 1},
		{Status: 400, Body: twiliotest.Error(21620, "bad media"), Code: domain.CodeMediaError, Attempts: 1},
		{Status: 400, Body: twiliotest.Error(99999, "new code"), Code: domain.CodeRejected, Attempts: 1},
		{Status: 400, Body: "not json", Code: domain.CodeRejected, Attempts: 1},
		{Status: 401, Body: twiliotest.Error(20003, "Authenticate"), Code: domain.CodeProviderError, Temporary: true, Attempts: 3,
			Health: httpcalltest.Down},
		{Status: 500, Body: "oops", Code: domain.CodeProviderError, Temporary: true, Attempts: 3},
		{Status: 503, Code: domain.CodeProviderError, Temporary: true, Attempts: 3},
	}, sms("447700900123"), twiliotest.New, func(p *twiliotest.Server) (provider.Adapter, *httpcalltest.Clock) {
		a, _, clock := newAdapter(t, p, nil)
		return a, clock
	})
}

func TestRateLimitHonoursRetryAfter(t *testing.T) {
	p := twiliotest.New(t)
	var mu sync.Mutex
	calls := 0
	p.SetAnswer(func(url.Values) (int, string, http.Header, bool) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return 429, twiliotest.Error(20429, "Too Many Requests"), http.Header{"Retry-After": {"3"}}, true
		}
		return 0, "", nil, false
	})
	a, _, w := newAdapter(t, p, nil)
	res := a.Submit(context.Background(), []provider.Outbound{sms("447700900123")})
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if d := w.Waits(); len(d) != 1 || d[0] != 3*time.Second {
		t.Errorf("waited %v, want the 3s of Retry-After", d)
	}
}

func TestLongRetryAfterHoldsEveryRequest(t *testing.T) {
	p := twiliotest.New(t)
	p.SetAnswer(func(url.Values) (int, string, http.Header, bool) {
		return 429, twiliotest.Error(20429, "Too Many Requests"), http.Header{"Retry-After": {"120"}}, true
	})
	a, _, w := newAdapter(t, p, nil)
	for range 2 {
		res := a.Submit(context.Background(), []provider.Outbound{sms("447700900123")})
		if e := res[0].Err; e == nil || !e.Temporary || !strings.Contains(e.Message, "rate limit") {
			t.Fatalf("%+v", e)
		}
	}
	if n := len(p.Sends()); n != 1 {
		t.Errorf("%d requests reached Twilio within its Retry-After, want 1", n)
	}
	if d := w.Waits(); len(d) != 0 {
		t.Errorf("waited %v for a pause longer than MaxRetryAfter", d)
	}
	_ = w.Sleep(context.Background(), 121*time.Second)
	a.Submit(context.Background(), []provider.Outbound{sms("447700900123")})
	if n := len(p.Sends()); n != 2 {
		t.Errorf("after the pause: %d requests, want 2", n)
	}
}

func TestTimeoutIsTemporary(t *testing.T) {
	p := twiliotest.New(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	p.SetAnswer(func(url.Values) (int, string, http.Header, bool) {
		<-release
		return 0, "", nil, false
	})
	a, _, _ := newAdapter(t, p, func(c *twilio.Config) { c.RequestTimeout = 50 * time.Millisecond; c.MaxAttempts = 1 })
	res := a.Submit(context.Background(), []provider.Outbound{sms("447700900123")})
	if e := res[0].Err; e == nil || !e.Temporary || !strings.Contains(e.Message, "no answer within") {
		t.Fatalf("%+v", e)
	}
}

func TestStatusMapping(t *testing.T) {
	c := httpcalltest.Case
	httpcalltest.CheckStatuses(t, "SM1", http.StatusNoContent, []httpcalltest.StatusCase{
		c("sent", "", domain.Sent, ""),
		c("delivered", "", domain.Delivered, ""),
		c("read", "", domain.Read, ""),
		c("undelivered", "30003", domain.Failed, domain.CodeUndelivered),
		c("undelivered", "30005", domain.Failed, domain.CodeInvalidNumber),
		c("undelivered", "30007", domain.Failed, domain.CodeRejected),
		c("undelivered", "", domain.Failed, domain.CodeUndelivered),
		c("failed", "30034", domain.Failed, domain.CodeInvalidSender),
		c("failed", "", domain.Failed, domain.CodeRejected),
		c("canceled", "", domain.Failed, domain.CodeDeleted),
		c("queued", "", "", ""),
		c("sending", "", "", ""),
		c("accepted", "", "", ""),
	}, func(c httpcalltest.StatusCase) (*httptest.ResponseRecorder, *providertest.Sink) {
		a, sink, _ := newAdapter(t, twiliotest.New(t), nil)
		form := url.Values{"MessageSid": {"SM1"}, "MessageStatus": {c.Status}, "ErrorCode": {c.ErrorCode}}
		return callback(a, twilio.StatusPath, form, testToken), sink
	})
}

func TestInboundReachesTheSink(t *testing.T) {
	p := twiliotest.New(t)
	a, sink, _ := newAdapter(t, p, nil)
	form := url.Values{"MessageSid": {"SMin1"}, "From": {"+5511999990001"}, "To": {"+15017122661"}, "Body": {"STOP"},
		"NumMedia": {"1"}, "MediaUrl0": {"https://api.twilio.com/media/1"}, "AccountSid": {testSID}}
	w := callback(a, twilio.InboundPath, form, testToken)
	if w.Code != 200 || !strings.Contains(w.Body.String(), "<Response>") {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	_, in := sink.Got()
	if len(in) != 1 || in[0].From != "5511999990001" || in[0].To != "15017122661" || in[0].Ref != "SMin1" ||
		in[0].Body != "STOP\nhttps://api.twilio.com/media/1" || in[0].Channel != domain.SMS {
		t.Fatalf("%+v", in)
	}
}

// A forged, unsigned, re-addressed or tampered callback is refused with
// 401 and records nothing.
func TestBadSignaturesAreRefused(t *testing.T) {
	p := twiliotest.New(t)
	a, sink, _ := newAdapter(t, p, nil)
	form := url.Values{"MessageSid": {"SM1"}, "MessageStatus": {"delivered"}}
	for name, req := range map[string]func() *http.Request{
		"unsigned": func() *http.Request { return post(twilio.StatusPath, form, "") },
		"forged": func() *http.Request {
			return post(twilio.StatusPath, form, twilio.Sign("not the token", testPublic+twilio.StatusPath, form))
		},
		"signed for the internal address": func() *http.Request {
			return post(twilio.StatusPath, form, twilio.Sign(testToken, "http://10.0.0.5:8080"+twilio.StatusPath, form))
		},
		"tampered": func() *http.Request {
			sig := twilio.Sign(testToken, testPublic+twilio.StatusPath, url.Values{"MessageSid": {"SM1"}, "MessageStatus": {"failed"}})
			return post(twilio.StatusPath, form, sig)
		},
		"inbound signed as status": func() *http.Request {
			return post(twilio.InboundPath, url.Values{"From": {"+1"}, "To": {"+2"}}, twilio.Sign(testToken, testPublic+twilio.StatusPath,
				url.Values{"From": {"+1"}, "To": {"+2"}}))
		},
		"not base64": func() *http.Request { return post(twilio.StatusPath, form, "!!!") },
	} {
		httpcalltest.Refused(t, name, httpcalltest.Serve(twilio.Type(), a, req()))
	}
	httpcalltest.NothingRecorded(t, sink)
	if !strings.Contains(a.Health().Detail, "bad signatures 6") {
		t.Errorf("health %q", a.Health().Detail)
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"MSGSVC_TWILIO_ACCOUNT_SID": testSID, "MSGSVC_TWILIO_AUTH_TOKEN": "tok",
		"MSGSVC_TWILIO_MESSAGING_SERVICE_SID": "MG0123456789abcdef0123456789abcdef", "MSGSVC_PUBLIC_URL": testPublic}
	providertest.CheckShortcut(t, twilio.Type(), env, map[string]string{"MSGSVC_PUBLIC_URL": ""}, func(s provider.Settings) bool {
		c := s.(twilio.Config)
		return c.AuthToken == "tok" && c.PublicURL == testPublic
	}, "PublicURL")
	providertest.Names(t, twilio.Config{AccountSID: "AC1",
		Account: httpcall.Account{PublicURL: "ftp://x"}}.Validate(), "AccountSID", "AuthToken", "From", "PublicURL")
}
