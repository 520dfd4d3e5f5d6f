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
	cfg := twilio.Config{AccountSID: testSID, AuthToken: testToken, From: "+15017122661", APIURL: p.URL, PublicURL: testPublic,
		Tuning: httpcall.Tuning{RetryMin: 10 * time.Millisecond, RetryMax: 40 * time.Millisecond}}
	if tune != nil {
		tune(&cfg)
	}
	sink := &providertest.Sink{}
	clock := httpcalltest.NewClock(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	a, err := twilio.New(cfg, provider.Deps{Sink: sink}, clock.Deps())
	if err != nil {
		t.Fatal(err)
	}
	return a, sink, clock
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

func TestAnswersMapToErrors(t *testing.T) {
	for _, c := range []struct {
		status    int
		body      string
		code      string
		temporary bool
		attempts  int
	}{
		{400, twiliotest.Error(21211, "invalid To"), domain.CodeInvalidNumber, false, 1},
		{400, twiliotest.Error(21606, "From not SMS capable"), domain.CodeInvalidSender, false, 1},
		{400, twiliotest.Error(21610, "unsubscribed"), domain.CodeRejected, false, 1},
		{400, twiliotest.Error(21620, "bad media"), domain.CodeMediaError, false, 1},
		{400, twiliotest.Error(99999, "new code"), domain.CodeRejected, false, 1},
		{400, "not json", domain.CodeRejected, false, 1},
		{401, twiliotest.Error(20003, "Authenticate"), domain.CodeProviderError, true, 3},
		{500, "oops", domain.CodeProviderError, true, 3},
		{503, "", domain.CodeProviderError, true, 3},
	} {
		p := twiliotest.New(t)
		p.SetAnswer(func(url.Values) (int, string, http.Header, bool) { return c.status, c.body, nil, true })
		a, _, _ := newAdapter(t, p, nil)
		res := a.Submit(context.Background(), []provider.Outbound{sms("447700900123")})
		if e := res[0].Err; e == nil || e.Code != c.code || e.Temporary != c.temporary {
			t.Errorf("%d %s: %+v", c.status, c.body, e)
		}
		if n := len(p.Sends()); n != c.attempts {
			t.Errorf("%d %s: %d attempts, want %d", c.status, c.body, n, c.attempts)
		}
		if c.status == 401 && a.Health().Ready {
			t.Error("ready while Twilio refuses the credentials")
		}
	}
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
		w := httpcalltest.Serve(twilio.Type(), a, req())
		if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "INVALID_SIGNATURE") {
			t.Errorf("%s: %d %s", name, w.Code, w.Body)
		}
	}
	if st, in := sink.Got(); len(st) != 0 || len(in) != 0 {
		t.Fatalf("recorded %+v %+v", st, in)
	}
	if !strings.Contains(a.Health().Detail, "bad signatures 6") {
		t.Errorf("health %q", a.Health().Detail)
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"MSGSVC_TWILIO_ACCOUNT_SID": testSID, "MSGSVC_TWILIO_AUTH_TOKEN": "tok",
		"MSGSVC_TWILIO_MESSAGING_SERVICE_SID": "MG0123456789abcdef0123456789abcdef", "MSGSVC_PUBLIC_URL": testPublic}
	s, ok, err := twilio.Type().FromEnv(func(k string) string { return env[k] })
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	if c := s.(twilio.Config); c.AuthToken != "tok" || c.PublicURL != testPublic {
		t.Errorf("%+v", c)
	}
	delete(env, "MSGSVC_PUBLIC_URL")
	if _, _, err := twilio.Type().FromEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "PublicURL") {
		t.Errorf("no public URL: %v", err)
	}
	if _, ok, _ := twilio.Type().FromEnv(func(string) string { return "" }); ok {
		t.Error("configured with no variables")
	}
	err = twilio.Config{AccountSID: "AC1", PublicURL: "ftp://x"}.Validate()
	for _, want := range []string{"AccountSID", "AuthToken", "From", "PublicURL"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to name %s", err, want)
		}
	}
}
