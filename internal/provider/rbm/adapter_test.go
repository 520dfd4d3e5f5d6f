package rbm

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
)

var (
	png  = append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 64)...)
	docx = []byte("PK\x03\x04 not really a document")
)

func rcs(id, to, body string, c domain.Content) provider.Outbound {
	return provider.Outbound{ID: id, AccountID: "acc_1", Env: domain.Live, To: to, CountryCode: "55", Channel: domain.RCS, Body: body,
		Content: c, ExpiresAt: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)}
}

// Every kind of content goes out in RBM's own shape, as the exact JSON
// the platform receives; the platform checks each against the documented
// rules, the token it was given, and the agent.
func TestContentShapes(t *testing.T) {
	reply := domain.Button{Type: domain.ReplyButton, Title: "Yes", Payload: "confirm-42"}
	link := domain.Button{Type: domain.URLButton, Title: "Track", URL: "https://example.com/t/42"}
	call := domain.Button{Type: domain.CallButton, Title: "Call us", Phone: "14155552671"}
	const expire = `"expireTime":"2026-11-24T10:00:00.000Z"`
	cases := []struct {
		name    string
		content domain.Content
		want    string
	}{
		{"text", domain.Content{}, `{"contentMessage":{"text":"Your order shipped"},` + expire + `}`},
		{"text and suggestions", domain.Content{Buttons: []domain.Button{reply, link, call}},
			`{"contentMessage":{"text":"Your order shipped","suggestions":[
			  {"reply":{"text":"Yes","postbackData":"confirm-42"}},
			  {"action":{"text":"Track","postbackData":"url:1","openUrlAction":{"url":"https://example.com/t/42"}}},
			  {"action":{"text":"Call us","postbackData":"call:2","dialAction":{"phoneNumber":"+14155552671"}}}]},` + expire + `}`},
		{"media by URL, with a button", domain.Content{Media: &domain.Media{URL: "https://cdn.example.com/a.jpg"}, Buttons: []domain.Button{reply}},
			`{"contentMessage":{"richCard":{"standaloneCard":{"cardOrientation":"VERTICAL","cardContent":{
			  "description":"Your order shipped","media":{"height":"MEDIUM","contentInfo":{"fileUrl":"https://cdn.example.com/a.jpg"}},
			  "suggestions":[{"reply":{"text":"Yes","postbackData":"confirm-42"}}]}}}},` + expire + `}`},
		{"our uploaded file", domain.Content{Media: &domain.Media{MediaID: "med_png"}},
			`{"contentMessage":{"richCard":{"standaloneCard":{"cardOrientation":"VERTICAL","cardContent":{
			  "description":"Your order shipped","media":{"height":"MEDIUM","uploadedRbmFile":{"fileName":"FILE"}}}}}},` + expire + `}`},
		{"one card", domain.Content{Cards: []domain.Card{{Title: "Trail runner", Description: "20% off", Buttons: []domain.Button{link}}}},
			`{"contentMessage":{"richCard":{"standaloneCard":{"cardOrientation":"VERTICAL","cardContent":{
			  "title":"Trail runner","description":"20% off",
			  "suggestions":[{"action":{"text":"Track","postbackData":"url:0","openUrlAction":{"url":"https://example.com/t/42"}}}]}}}},` + expire + `}`},
		{"carousel, with chips", domain.Content{Buttons: []domain.Button{reply}, Cards: []domain.Card{
			{Title: "Trail runner", Media: &domain.Media{MediaID: "med_png"}, Buttons: []domain.Button{reply}},
			{Title: "Road racer", Description: "Carbon plate", Media: &domain.Media{URL: "https://cdn.example.com/b.mp4"}},
			{Description: "Only a description", Buttons: []domain.Button{call}}}},
			`{"contentMessage":{"richCard":{"carouselCard":{"cardWidth":"MEDIUM","cardContents":[
			  {"title":"Trail runner","media":{"height":"MEDIUM","uploadedRbmFile":{"fileName":"FILE"}},
			   "suggestions":[{"reply":{"text":"Yes","postbackData":"confirm-42"}}]},
			  {"title":"Road racer","description":"Carbon plate","media":{"height":"MEDIUM","contentInfo":{"fileUrl":"https://cdn.example.com/b.mp4"}}},
			  {"description":"Only a description",
			   "suggestions":[{"action":{"text":"Call us","postbackData":"call:0","dialAction":{"phoneNumber":"+14155552671"}}}]}]}},
			 "suggestions":[{"reply":{"text":"Yes","postbackData":"confirm-42"}}]},` + expire + `}`},
	}
	fs := newFiles(t)
	fs.add(t, "acc_1", "med_png", "image/png", png)
	r := newRig(t, nil, WithFiles(fs))
	var outs []provider.Outbound
	for i, c := range cases {
		outs = append(outs, rcs("msg_"+string(rune('a'+i)), "5511999990012", "Your order shipped", c.content))
	}
	results := r.a.Submit(context.Background(), outs)
	files := r.p.Files()
	if len(files) != 1 {
		t.Fatalf("%d files uploaded; the same file twice must be uploaded once", len(files))
	}
	var fileName string
	for name, f := range files {
		if f.ContentType != "image/png" || string(f.Data) != string(png) {
			t.Fatalf("uploaded %s %q", f.ContentType, f.Data)
		}
		fileName = name
	}
	sent := map[string][]byte{}
	for _, m := range r.p.Messages() {
		if m.Phone != "+5511999990012" {
			t.Fatalf("sent to %s", m.Phone)
		}
		sent[m.ID] = m.Body
	}
	for i, c := range cases {
		res := results[i]
		if res.Err != nil || res.Ref != messageID(outs[i].ID) {
			t.Fatalf("%s: %+v", c.name, res)
		}
		sameJSON(t, c.name, sent[res.Ref], strings.ReplaceAll(c.want, "FILE", fileName))
	}
	for _, req := range r.p.Requests() {
		if req.Query.Get("agentId") != testAgent {
			t.Fatalf("%s %s without the agent", req.Method, req.Path)
		}
	}
	if n := r.p.TokenRequests(); n != 1 {
		t.Fatalf("%d token requests; the token is cached", n)
	}
}

// A message handed over twice keeps its id: the platform knows it (409)
// and the hand-over counts as done.
func TestResubmissionIsRecognised(t *testing.T) {
	r := newRig(t, nil)
	o := rcs("msg_1", "5511999990012", "hi", domain.Content{})
	for i := range 2 {
		res := r.a.Submit(context.Background(), []provider.Outbound{o})[0]
		if res.Err != nil || res.Ref != messageID("msg_1") {
			t.Fatalf("hand-over %d: %+v", i, res)
		}
	}
	if n := len(r.p.Messages()); n != 1 {
		t.Fatalf("platform has %d messages", n)
	}
}

// The platform's answers become our errors: 404 is a phone without RCS,
// 400 a refusal of the message, 429 and 5xx are retried with backoff and
// then temporary, and refused credentials (token endpoint, 401, 403) mark
// the provider down until a call goes through again.
func TestErrorsMapped(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, nil)
	send := func(o provider.Outbound) provider.Result { return r.a.Submit(ctx, []provider.Outbound{o})[0] }
	r.p.NotCapable("5511999990003")
	if res := send(rcs("msg_1", "5511999990003", "hi", domain.Content{})); res.Err == nil || res.Err.Temporary ||
		res.Err.Code != domain.CodeRCSNotSupported || !strings.Contains(res.Err.Message, "NOT_FOUND") {
		t.Fatalf("no RCS: %+v", res.Err)
	}
	long := domain.Content{Buttons: []domain.Button{{Type: domain.ReplyButton, Title: strings.Repeat("x", 26), Payload: "p"}}}
	if res := send(rcs("msg_2", "5511999990012", "hi", long)); res.Err == nil || res.Err.Temporary || res.Err.Code != domain.CodeRejected ||
		!strings.Contains(res.Err.Message, "INVALID_ARGUMENT") {
		t.Fatalf("invalid: %+v", res.Err)
	}
	r.p.FailNext(429, 503)
	if res := send(rcs("msg_3", "5511999990012", "hi", domain.Content{})); res.Err != nil {
		t.Fatalf("transient errors not retried: %+v", res.Err)
	}
	r.p.FailNext(503, 503, 503)
	if res := send(rcs("msg_4", "5511999990012", "hi", domain.Content{})); res.Err == nil || !res.Err.Temporary {
		t.Fatalf("still down after every try: %+v", res.Err)
	}
	if got := metric(t, r.a, "rbm_retries_total", nil); got != 4 {
		t.Fatalf("%v retries, want 4", got)
	}
	if !r.a.Health().Ready() {
		t.Fatalf("down after transient errors: %+v", r.a.Health())
	}
	r.p.ForgetTokens() // the API now answers 401 to our cached token
	if res := send(rcs("msg_5", "5511999990012", "hi", domain.Content{})); res.Err == nil || !res.Err.Temporary ||
		!strings.Contains(res.Err.Message, "credentials refused") {
		t.Fatalf("401: %+v", res.Err)
	}
	if h := r.a.Health(); h.Ready() || !strings.Contains(h.AuthError, "401") {
		t.Fatalf("health after 401: %+v", h)
	}
	if got := metric(t, r.a, "rbm_up", nil); got != 0 {
		t.Fatalf("rbm_up %v", got)
	}
	if res := send(rcs("msg_6", "5511999990012", "hi", domain.Content{})); res.Err != nil || !r.a.Health().Ready() {
		t.Fatalf("a new token was not fetched: %+v %+v", res.Err, r.a.Health())
	}
	r.p.ForgetTokens()
	r.p.RefuseTokens(1)
	r.a.dropToken()
	if res := send(rcs("msg_7", "5511999990012", "hi", domain.Content{})); res.Err == nil || !res.Err.Temporary ||
		!strings.Contains(res.Err.Message, "invalid_grant") || r.a.Health().Ready() {
		t.Fatalf("token refused: %+v %+v", res.Err, r.a.Health())
	}
	if res := send(rcs("msg_8", "5511999990012", "hi", domain.Content{})); res.Err != nil || !r.a.Health().Ready() {
		t.Fatalf("after the key was accepted again: %+v", res.Err)
	}
}

func TestWrongAgentIsAnAuthProblem(t *testing.T) {
	r := newRig(t, func(c *Config) { c.AgentID = "someone-else" })
	res := r.a.Submit(context.Background(), []provider.Outbound{rcs("msg_1", "5511999990012", "hi", domain.Content{})})[0]
	if res.Err == nil || !res.Err.Temporary || !strings.Contains(res.Err.Message, "403") || r.a.Health().Ready() {
		t.Fatalf("%+v %+v", res.Err, r.a.Health())
	}
}

// Media RBM does not carry, or that is not the account's, is refused
// before anything is sent.
func TestMediaRefusals(t *testing.T) {
	fs := newFiles(t)
	fs.add(t, "acc_1", "med_docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", docx)
	fs.add(t, "acc_2", "med_other", "image/png", png)
	r := newRig(t, nil, WithFiles(fs))
	outs := []provider.Outbound{
		rcs("msg_1", "5511999990012", "hi", domain.Content{Media: &domain.Media{MediaID: "med_docx"}}),
		rcs("msg_2", "5511999990012", "hi", domain.Content{Media: &domain.Media{MediaID: "med_other"}}),
	}
	for i, res := range r.a.Submit(context.Background(), outs) {
		if res.Err == nil || res.Err.Temporary || res.Err.Code != domain.CodeRejected {
			t.Fatalf("%d: %+v", i, res)
		}
	}
	if len(r.p.Messages())+len(r.p.Files()) != 0 {
		t.Fatal("something was sent")
	}
}

// Capability checks: 200 is RCS, 404 is not, no answer is unknown.
func TestCapabilities(t *testing.T) {
	r := newRig(t, func(c *Config) { c.Attempts = 1 })
	r.p.NotCapable("5511999990003")
	got := r.a.Capabilities(context.Background(), []string{"5511999990003", "5511999990012"})
	if len(got) != 2 || got["5511999990003"] || !got["5511999990012"] {
		t.Fatalf("%v", got)
	}
	r.p.FailNext(500)
	if got := r.a.Capabilities(context.Background(), []string{"5511999990013"}); len(got) != 0 {
		t.Fatalf("unknown became %v", got)
	}
	for _, phone := range r.p.CapabilityChecks() {
		if !strings.HasPrefix(phone, "+55") {
			t.Fatalf("asked about %q", phone)
		}
	}
}

// A message with an SMS fallback is due to be taken back FallbackAfter
// after its hand-over, but no later than halfway through what is left of
// its validity; Revoke takes it back unless it was delivered.
func TestFallbackDeadlineAndRevoke(t *testing.T) {
	r := newRig(t, nil)
	fb := domain.Content{Fallback: &domain.Fallback{Channel: domain.SMS, Message: "sms"}}
	long := rcs("msg_long", "5511999990012", "hi", fb)
	long.ExpiresAt = r.now.Add(72 * time.Hour)
	short := rcs("msg_short", "5511999990012", "hi", fb)
	short.ExpiresAt = r.now.Add(4 * time.Minute)
	plain := rcs("msg_plain", "5511999990012", "hi", domain.Content{})
	delivered := rcs("msg_done", "5511999990012", "hi", fb)
	res := r.a.Submit(context.Background(), []provider.Outbound{long, short, plain, delivered})
	for i, want := range []time.Time{r.now.Add(10 * time.Minute), r.now.Add(2 * time.Minute), {}, r.now.Add(10 * time.Minute)} {
		if res[i].Err != nil || !res[i].FallbackAt.Equal(want) {
			t.Fatalf("%d: %+v, want fallback at %v", i, res[i], want)
		}
	}
	r.p.Deliver(messageID("msg_done"))
	r.p.FailNext(503)
	got := r.a.Revoke(context.Background(), []provider.Outbound{long, delivered})
	if !got[0].Revoked || got[0].Err != nil || got[1].Revoked || got[1].Err != nil {
		t.Fatalf("revocations %+v", got)
	}
	if rv := r.p.Revoked(); len(rv) != 1 || rv[0] != messageID("msg_long") {
		t.Fatalf("platform revoked %v", rv)
	}
	for _, req := range r.p.Requests() {
		if req.Method == "DELETE" && req.Path != "/v1/phones/+5511999990012/agentMessages/"+messageID("msg_long") &&
			req.Path != "/v1/phones/+5511999990012/agentMessages/"+messageID("msg_done") {
			t.Fatalf("DELETE %s", req.Path)
		}
	}
}

func TestUploadURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://rcsbusinessmessaging.googleapis.com/v1": "https://rcsbusinessmessaging.googleapis.com/upload/v1",
		"http://127.0.0.1:8000/v1":                       "http://127.0.0.1:8000/upload/v1",
		"https://eu-rcsbusinessmessaging.example/rbm/v1": "https://eu-rcsbusinessmessaging.example/rbm/upload/v1",
	} {
		if got := uploadURL(in); got != want {
			t.Errorf("%s: %s", in, got)
		}
	}
	if _, err := url.Parse(uploadURL("https://h")); err != nil {
		t.Fatal(err)
	}
}

func TestConfigProblems(t *testing.T) {
	cases := map[string]Config{
		"AgentID":       {Credentials: []byte(`{"type":"service_account","client_email":"a","private_key":"k","token_uri":"u"}`), ClientToken: "t"},
		"lacks":         {AgentID: "a", Credentials: []byte(`{"type":"service_account"}`), ClientToken: "t"},
		"type":          {AgentID: "a", Credentials: []byte(`{"type":"authorized_user"}`), ClientToken: "t"},
		"ClientToken":   {AgentID: "a", Credentials: []byte(`{"type":"service_account","client_email":"a","private_key":"k","token_uri":"u"}`)},
		"APIURL":        {AgentID: "a", Credentials: []byte(`{"type":"service_account","client_email":"a","private_key":"k","token_uri":"u"}`), ClientToken: "t", APIURL: "ftp://x"},
		"RatePerSecond": {AgentID: "a", Credentials: []byte(`{"type":"service_account","client_email":"a","private_key":"k","token_uri":"u"}`), ClientToken: "t", RatePerSecond: -1},
	}
	for want, c := range cases {
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
		if err != nil && strings.Contains(err.Error(), `"k"`) {
			t.Errorf("a secret in %v", err)
		}
	}
}

// A send's sender (an approved RCS sender is an agent id) is the agent it
// goes out from, for the message, its file and its revocation.
func TestSenderIsTheAgent(t *testing.T) {
	fs := newFiles(t)
	fs.add(t, "acc_1", "med_png", "image/png", png)
	r := newRig(t, nil, WithFiles(fs))
	r.p.AddAgent("acme-second")
	o := rcs("msg_1", "5511999990012", "hi", domain.Content{Media: &domain.Media{MediaID: "med_png"}})
	o.From = "acme-second"
	plain := rcs("msg_2", "5511999990012", "hi", domain.Content{Media: &domain.Media{MediaID: "med_png"}})
	for _, res := range r.a.Submit(context.Background(), []provider.Outbound{o}) {
		if res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	if res := r.a.Submit(context.Background(), []provider.Outbound{plain})[0]; res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := r.a.Revoke(context.Background(), []provider.Outbound{o}); !got[0].Revoked {
		t.Fatalf("%+v", got)
	}
	agents := map[string][]string{}
	for _, req := range r.p.Requests() {
		what := req.Method + " " + req.Path[strings.LastIndex(req.Path, "/")+1:]
		if req.Method == "DELETE" {
			what = "DELETE"
		}
		agents[what] = append(agents[what], req.Query.Get("agentId"))
	}
	want := map[string][]string{"POST files": {"acme-second", testAgent}, "POST agentMessages": {"acme-second", testAgent}, "DELETE": {"acme-second"}}
	for k, v := range want {
		if strings.Join(agents[k], ",") != strings.Join(v, ",") {
			t.Fatalf("%s from %v, want %v (all: %v)", k, agents[k], v, agents)
		}
	}
}

// Start asks for a token at once, so that health shows refused
// credentials before a message needs them, and accepted ones as such.
func TestStartChecksCredentials(t *testing.T) {
	r := newRig(t, nil)
	r.p.RefuseTokens(1)
	if err := r.a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	polltest.Until(t, "a health check", func() bool { return r.a.Health().Checked })
	if h := r.a.Health(); h.Ready() || !strings.Contains(h.AuthError, "invalid_grant") {
		t.Fatalf("%+v", h)
	}
	r2 := newRig(t, nil)
	if err := r2.a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	polltest.Until(t, "a health check", func() bool { return r2.a.Health().Checked })
	if h := r2.a.Health(); !h.Ready() || r2.p.TokenRequests() != 1 {
		t.Fatalf("%+v", h)
	}
}

// memCache is platform_media in memory.
type memCache struct {
	mu sync.Mutex
	m  map[string]string
}

func (c *memCache) PlatformMedia(_ context.Context, scope, sum string, _ time.Time) (string, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.m[scope+"|"+sum]
	return id, ok, nil
}

func (c *memCache) SavePlatformMedia(_ context.Context, scope, sum, id string, _ time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[scope+"|"+sum] = id
	return nil
}

// A file uploaded by one node (or an earlier run) is sent by its platform
// name from another, with no second upload.
func TestUploadsOutliveTheProcess(t *testing.T) {
	fs := newFiles(t)
	fs.add(t, "acc_1", "med_png", "image/png", png)
	cache := &memCache{m: map[string]string{}}
	first := newRig(t, nil, WithFiles(fs), WithMediaCache(cache))
	content := domain.Content{Media: &domain.Media{MediaID: "med_png"}}
	if res := first.a.Submit(context.Background(), []provider.Outbound{rcs("msg_a", "5511999990012", "Shipped", content)}); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if len(first.p.Files()) != 1 || len(cache.m) != 1 {
		t.Fatalf("%d uploads, %d remembered; want 1 and 1", len(first.p.Files()), len(cache.m))
	}
	var name string
	for _, v := range cache.m {
		name = v
	}
	// Another adapter on the same platform, as another node would be.
	second, err := New(first.a.cfg, &providertest.Sink{}, WithFiles(fs), WithMediaCache(cache), WithClock(func() time.Time { return first.now }))
	if err != nil {
		t.Fatal(err)
	}
	if res := second.Submit(context.Background(), []provider.Outbound{rcs("msg_b", "5511999990012", "Shipped", content)}); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if n := len(first.p.Files()); n != 1 {
		t.Fatalf("%d uploads after the second node's send; want still 1", n)
	}
	msgs := first.p.Messages()
	if len(msgs) != 2 || !strings.Contains(string(msgs[1].Body), `"fileName":"`+name+`"`) {
		t.Fatalf("sent %d messages, the last %s; want it to name the file %s", len(msgs), msgs[len(msgs)-1].Body, name)
	}
}
