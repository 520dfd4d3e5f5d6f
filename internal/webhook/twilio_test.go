package webhook

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twilio/twilio-go/client"

	"github.com/msgsvc/msgsvc/internal/domain"
)

const (
	twilioToken1 = "0123456789abcdef0123456789abcdef"
	twilioSid1   = "AC11111111111111111111111111111111"
	twilioSid2   = "AC22222222222222222222222222222222"
)

// twilioCreds are account SIDs: AC1 is acc_1's in live, AC2 acc_2's.
type twilioCreds struct {
	mu    sync.Mutex
	reads int
	token string
}

func (c *twilioCreds) TwilioCredentialBySid(_ context.Context, sid string) (domain.TwilioCredential, domain.Account, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	switch sid {
	case twilioSid1:
		return domain.TwilioCredential{Sid: sid, Kind: domain.TwilioAccountSid, AccountID: "acc_1", Env: domain.Live, Secret: c.token},
			domain.Account{ID: "acc_1"}, nil
	case twilioSid2:
		return domain.TwilioCredential{Sid: sid, Kind: domain.TwilioAccountSid, AccountID: "acc_2", Env: domain.Live,
			Secret: "ffffffffffffffffffffffffffffffff"}, domain.Account{ID: "acc_2"}, nil
	}
	return domain.TwilioCredential{}, domain.Account{}, domain.ErrNotFound
}

// request is what a receiver was sent.
type request struct {
	method, url, contentType, sig, idem string
	form                                url.Values
}

func twilioReceiver(t *testing.T, status *int) (*httptest.Server, <-chan request) {
	got := make(chan request, 10)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f, err := url.ParseQuery(string(body))
		if r.Method == http.MethodGet {
			f = r.URL.Query()
		}
		if err != nil {
			t.Errorf("body %q: %v", body, err)
		}
		got <- request{method: r.Method, url: "http://" + r.Host + r.URL.RequestURI(), contentType: r.Header.Get("Content-Type"),
			sig: r.Header.Get("X-Twilio-Signature"), idem: r.Header.Get("I-Twilio-Idempotency-Token"), form: f}
		w.WriteHeader(*status)
	}))
	t.Cleanup(rcv.Close)
	return rcv, got
}

func first(v url.Values) map[string]string {
	out := map[string]string{}
	for k, vs := range v {
		out[k] = vs[0]
	}
	return out
}

// A Twilio event is posted form-encoded, or sent as a GET with its
// parameters in the query, signed so that twilio-go's own validator
// accepts it with the account SID's token, and carries the event's id as
// Twilio's idempotency token. A 500 is retried like any webhook.
func TestTwilioEventsPostedSigned(t *testing.T) {
	status := http.StatusOK
	rcv, got := twilioReceiver(t, &status)
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	creds := &twilioCreds{token: twilioToken1}
	w := NewWorker(WorkerConfig{Store: secretStore{}, Twilio: creds, Sender: NewSender(SenderOptions{ClientOptions: ClientOptions{AllowPrivate: true}}),
		Schedule: Schedule{time.Minute}, Now: func() time.Time { return now }, Rand: func() float64 { return 0.5 }})
	params := url.Values{"MessageSid": {"SMaa"}, "AccountSid": {twilioSid1}, "From": {"+15005550006"}, "To": {"+5511999990010"},
		"MessageStatus": {"delivered"}, "Body": {"a&b=c ✓"}}
	v := client.NewRequestValidator(twilioToken1)

	post := domain.Event{ID: "evt_1", AccountID: "acc_1", Env: domain.Live, Event: domain.EventTwilioStatus,
		URL: rcv.URL + "/status?x=1", Body: params.Encode()}
	if out := w.deliver(context.Background(), post); out.State != domain.EventDelivered {
		t.Fatalf("POST: %+v", out)
	}
	r := <-got
	if r.method != http.MethodPost || r.contentType != "application/x-www-form-urlencoded" || r.idem != "evt_1" ||
		r.url != post.URL || r.form.Encode() != params.Encode() {
		t.Fatalf("POST request %+v", r)
	}
	if !v.Validate(r.url, first(r.form), r.sig) {
		t.Fatalf("twilio-go refused the POST's signature %q", r.sig)
	}

	get := post
	get.ID, get.Event, get.URL = "evt_2", domain.EventTwilioInbound, MethodURL("GET", rcv.URL+"/sms?k=v")
	if out := w.deliver(context.Background(), get); out.State != domain.EventDelivered {
		t.Fatalf("GET: %+v", out)
	}
	r = <-got
	if r.method != http.MethodGet || r.form.Get("Body") != "a&b=c ✓" || r.form.Get("k") != "v" || r.idem != "evt_2" {
		t.Fatalf("GET request %+v", r)
	}
	if !v.Validate(r.url, map[string]string{}, r.sig) {
		t.Fatalf("twilio-go refused the GET's signature %q for %s", r.sig, r.url)
	}

	status = http.StatusInternalServerError
	if out := w.deliver(context.Background(), post); out.State != domain.EventPending || !out.NextAttemptAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("after a 500: %+v, want a retry in a minute", out)
	}
	<-got
	if creds.reads != 1 {
		t.Fatalf("token read %d times, want once (cached)", creds.reads)
	}
}

// The events feed's event of a step of a Twilio-front message carries the
// callback's form beside its JSON body: the worker posts the form, signed
// so that twilio-go's validator accepts it, never the JSON, and a GET
// receiver gets the form in its query.
func TestFeedEventPostsItsTwilioForm(t *testing.T) {
	status := http.StatusOK
	rcv, got := twilioReceiver(t, &status)
	w := NewWorker(WorkerConfig{Store: secretStore{}, Twilio: &twilioCreds{token: twilioToken1},
		Sender: NewSender(SenderOptions{ClientOptions: ClientOptions{AllowPrivate: true}}), Schedule: Schedule{time.Minute}})
	params := url.Values{"MessageSid": {"SMaa"}, "AccountSid": {twilioSid1}, "To": {"+5511999990010"}, "MessageStatus": {"sent"}}
	m := domain.Message{ID: "msg_1", To: "5511999990010", Status: domain.Sent}
	ev := domain.Event{ID: "evt_1", AccountID: "acc_1", Env: domain.Live, MessageID: m.ID, Event: DeliveryStatus,
		URL: rcv.URL + "/status", Body: StatusBody(m, domain.Sent, time.Now()), Form: params.Encode()}
	v := client.NewRequestValidator(twilioToken1)
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		ev.URL = MethodURL(method, rcv.URL+"/status")
		if out := w.deliver(context.Background(), ev); out.State != domain.EventDelivered {
			t.Fatalf("%s: %+v", method, out)
		}
		r := <-got
		if r.method != method || r.form.Get("MessageStatus") != "sent" || r.form.Get("AccountSid") != twilioSid1 || r.idem != "evt_1" {
			t.Fatalf("%s request %+v, want the callback's form", method, r)
		}
		signed := first(r.form)
		if method == http.MethodGet {
			signed = map[string]string{}
		}
		if !v.Validate(r.url, signed, r.sig) {
			t.Fatalf("twilio-go refused the %s's signature %q", method, r.sig)
		}
	}
}

// An event is never signed with another account's token, nor with a SID
// that does not exist: the attempt fails, names why, and sends nothing.
func TestTwilioEventsSignOnlyWithTheirAccountsToken(t *testing.T) {
	status := http.StatusOK
	rcv, got := twilioReceiver(t, &status)
	w := NewWorker(WorkerConfig{Store: secretStore{}, Twilio: &twilioCreds{token: twilioToken1},
		Sender: NewSender(SenderOptions{ClientOptions: ClientOptions{AllowPrivate: true}}), Schedule: Schedule{time.Minute}})
	for name, ev := range map[string]domain.Event{
		"another account's SID": {AccountID: "acc_1", Env: domain.Live, Body: "AccountSid=" + twilioSid2},
		"an unknown SID":        {AccountID: "acc_1", Env: domain.Live, Body: "AccountSid=AC00000000000000000000000000000000"},
		"another environment":   {AccountID: "acc_1", Env: domain.Test, Body: "AccountSid=" + twilioSid1},
		"no SID":                {AccountID: "acc_1", Env: domain.Live, Body: "To=%2B15005550006"},
	} {
		ev.ID, ev.Event, ev.URL = "evt_x", domain.EventTwilioStatus, rcv.URL+"/status"
		out := w.deliver(context.Background(), ev)
		if out.State != domain.EventPending || !strings.Contains(out.Attempt.Error, "signing secret unavailable") {
			t.Errorf("%s: %+v", name, out)
		}
	}
	select {
	case r := <-got:
		t.Fatalf("a request went out: %+v", r)
	default:
	}
	// Without a store of credentials nothing is signed either.
	w = NewWorker(WorkerConfig{Store: secretStore{}, Sender: NewSender(SenderOptions{ClientOptions: ClientOptions{AllowPrivate: true}})})
	out := w.deliver(context.Background(), domain.Event{ID: "evt_y", AccountID: "acc_1", Env: domain.Live,
		Event: domain.EventTwilioStatus, URL: rcv.URL, Body: "AccountSid=" + twilioSid1})
	if out.State == domain.EventDelivered {
		t.Fatal("delivered without a token")
	}
}

// A new auth counter reads the token again: a credential removed or
// replaced stops signing on the next delivery.
func TestTwilioTokenFollowsTheCounter(t *testing.T) {
	status := http.StatusOK
	rcv, got := twilioReceiver(t, &status)
	creds := &twilioCreds{token: twilioToken1}
	version := int64(1)
	w := NewWorker(WorkerConfig{Store: secretStore{}, Twilio: creds, Sender: NewSender(SenderOptions{ClientOptions: ClientOptions{AllowPrivate: true}}),
		Version: func(context.Context) (int64, error) { return version, nil }})
	ev := domain.Event{ID: "evt_1", AccountID: "acc_1", Env: domain.Live, Event: domain.EventTwilioStatus, URL: rcv.URL + "/s",
		Body: "AccountSid=" + twilioSid1}
	w.deliver(context.Background(), ev)
	<-got
	creds.token = "99999999999999999999999999999999"
	w.deliver(context.Background(), ev)
	if r := <-got; !validates(twilioToken1, r) {
		t.Fatal("the cached token was not used while the counter stood")
	}
	version = 2
	w.deliver(context.Background(), ev)
	if r := <-got; !validates(creds.token, r) {
		t.Fatal("the new token was not read after the counter moved")
	}
	if creds.reads != 2 {
		t.Fatalf("%d reads, want 2", creds.reads)
	}
	w.cfg.Version = func(context.Context) (int64, error) { return 0, errors.New("database down") }
	if out := w.deliver(context.Background(), ev); out.State == domain.EventDelivered {
		t.Fatal("delivered without knowing whether the token stands")
	}
}

func validates(token string, r request) bool {
	v := client.NewRequestValidator(token)
	return v.Validate(r.url, first(r.form), r.sig)
}

// Retention redacts a Twilio callback's form: the recipient's number (To
// of a status, From of an inbound) and an inbound's text and media; the
// rest stays.
func TestRedactTwilioForms(t *testing.T) {
	redact := func(p string) string { return "h:" + p }
	status := url.Values{"To": {"+5511999990010"}, "From": {"+15005550006"}, "MessageStatus": {"sent"}}.Encode()
	got, err := RedactBody(status, redact)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := url.ParseQuery(got); f.Get("To") != "h:5511999990010" || f.Get("From") != "+15005550006" || f.Get("MessageStatus") != "sent" {
		t.Fatalf("status redacted to %v", f)
	}
	inbound := url.Values{"From": {"+5511999990010"}, "To": {"+15005550006"}, "Body": {"my secret"}, "SmsMessageSid": {"SMx"},
		"NumMedia": {"1"}, "MediaUrl0": {"https://m.example.com/1"}, "MediaContentType0": {"image/png"}}.Encode()
	got, err = RedactBody(inbound, redact)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := url.ParseQuery(got)
	if f.Get("From") != "h:5511999990010" || f.Get("To") != "+15005550006" || f.Get("Body") != "" || f.Get("NumMedia") != "0" ||
		f.Has("MediaUrl0") || f.Has("MediaContentType0") || f.Get("SmsMessageSid") != "SMx" {
		t.Fatalf("inbound redacted to %v", f)
	}
	if again, _ := RedactBody(got, func(p string) string { return p }); again != got {
		t.Fatalf("redacting twice changed %q to %q", got, again)
	}
}

// Logs name a GET receiver's host like any other's: the mark is not part
// of the address.
func TestHostOfMarkedURL(t *testing.T) {
	if h := hostOf(MethodURL("get", "https://hooks.example.com:8443/sms?token=secret")); h != "hooks.example.com:8443" {
		t.Fatalf("host %q", h)
	}
	if MethodURL("POST", "https://x.example.com/a") != "https://x.example.com/a" || MethodURL("", "https://x.example.com/a") != "https://x.example.com/a" {
		t.Fatal("a POST receiver's URL must stay as set")
	}
}
