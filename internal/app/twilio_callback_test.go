package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/twilio/twilio-go/client"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/twilio/sid"
)

// twilioReceiver is an integrator's Twilio webhook endpoint: it checks
// every request with twilio-go's own validator and the account's auth
// token, and answers 500 to the first request of each path in fail.
type twilioReceiver struct {
	t     *testing.T
	srv   *httptest.Server
	token string
	// tokenAt is the token of another account's receivers, by path.
	tokenAt map[string]string

	mu     sync.Mutex
	got    []twilioRequest
	fail   map[string]int
	tokens map[string]int // requests per I-Twilio-Idempotency-Token
}

type twilioRequest struct {
	method, path string
	form         url.Values
	valid        bool
}

func newTwilioReceiver(t *testing.T, token string, fail ...string) *twilioReceiver {
	r := &twilioReceiver{t: t, token: token, fail: map[string]int{}, tokens: map[string]int{}}
	for _, p := range fail {
		r.fail[p]++
	}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *twilioReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	full := r.srv.URL + req.URL.RequestURI()
	r.mu.Lock()
	token := r.token
	if tk, ok := r.tokenAt[req.URL.Path]; ok {
		token = tk
	}
	r.mu.Unlock()
	v := client.NewRequestValidator(token)
	var got twilioRequest
	switch req.Method {
	case http.MethodPost:
		form, err := url.ParseQuery(string(body))
		if err != nil || req.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			r.t.Errorf("%s: body %q (%v), content type %q", req.URL.Path, body, err, req.Header.Get("Content-Type"))
		}
		got = twilioRequest{method: req.Method, path: req.URL.Path, form: form,
			valid: v.ValidateBody(full, body, req.Header.Get("X-Twilio-Signature"))}
	default:
		got = twilioRequest{method: req.Method, path: req.URL.Path, form: req.URL.Query(),
			valid: v.Validate(full, map[string]string{}, req.Header.Get("X-Twilio-Signature"))}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tokens[req.Header.Get("I-Twilio-Idempotency-Token")]++
	if r.fail[req.URL.Path] > 0 {
		r.fail[req.URL.Path]--
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	r.got = append(r.got, got)
	w.WriteHeader(http.StatusNoContent)
}

// at lists what was accepted at a path.
func (r *twilioReceiver) at(path string) []twilioRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []twilioRequest
	for _, g := range r.got {
		if g.path == path {
			out = append(out, g)
		}
	}
	return out
}

// A message created through the Twilio front with a StatusCallback gets
// each of its status changes posted there, signed so that twilio-go's
// validator accepts them with the account SID's token, and a callback
// that met a 500 is posted again. A reply to a number whose SmsUrl is set
// is posted there (or sent as a GET when its SmsMethod says so). Each step
// is one row of the events table: the native events feed tells it, in its
// own JSON, from the row that posts the callback. Another account's number
// and token are its own.
func TestTwilioCallbacksAndInboundPosts(t *testing.T) {
	forEachDialect(t, testTwilioCallbacks)
}

func testTwilioCallbacks(t *testing.T, dialect string) {
	e := newEnv(t, dialect, envOptions{})
	ctx := context.Background()
	const token = "5f4dcc3b5aa765d61d8327deb882cf99"
	ac := "AC" + strings.Repeat("ab", 16)
	if err := e.st.CreateTwilioCredential(ctx, domain.TwilioCredential{Sid: ac, Kind: domain.TwilioAccountSid,
		AccountID: e.account.ID, Env: domain.Test, Secret: token, CreatedAt: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	rcv := newTwilioReceiver(t, token, "/status")

	out, err := e.srv.sends.Send(ctx, domain.Principal{Account: e.account, Kind: domain.CredentialTwilio, CredentialID: ac,
		Env: domain.Test}, domain.SendRequest{Channel: domain.SMS, Recipients: []string{"+5511999990010"}, Single: true,
		Text: "hello from Twilio code", Origin: domain.Origin{Front: domain.FrontTwilio,
			Twilio: &domain.TwilioOrigin{AccountSid: ac, StatusCallback: rcv.srv.URL + "/status?tag=1"}}}, intake.SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := out.Receipt.Messages[0].Message
	msid := sid.FromNative(sid.Message, m.ID)
	// The first callback meets a 500 and is posted again; the ones behind
	// it need not wait for its retry, so they may come first.
	polltest.Until(t, "the sent and delivered status callbacks", func() bool {
		seen := map[string]bool{}
		for _, g := range rcv.at("/status") {
			seen[g.form.Get("MessageStatus")] = true
		}
		return seen["sent"] && seen["delivered"]
	})
	var statuses []string
	for _, g := range rcv.at("/status") {
		if !g.valid {
			t.Errorf("status callback %v: twilio-go refused its signature", g.form)
		}
		if g.form.Get("MessageSid") != msid || g.form.Get("SmsSid") != msid || g.form.Get("AccountSid") != ac ||
			g.form.Get("To") != "+5511999990010" || g.form.Get("ApiVersion") != "2010-04-01" ||
			g.form.Get("SmsStatus") != g.form.Get("MessageStatus") {
			t.Errorf("status callback %v", g.form)
		}
		statuses = append(statuses, g.form.Get("MessageStatus"))
	}
	if len(statuses) != 2 {
		t.Errorf("statuses %v, want sent and delivered, once each", statuses)
	}
	rcv.mu.Lock()
	retried := 0
	for _, n := range rcv.tokens {
		if n == 2 {
			retried++
		}
	}
	rcv.mu.Unlock()
	if retried != 1 {
		t.Errorf("tokens %v: want the first callback posted twice (a 500, then its retry), the others once", rcv.tokens)
	}
	// One row per step, which is both the feed's event and the callback.
	rows, err := e.st.EventsForMessage(ctx, e.account.ID, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string]int{}
	for _, ev := range rows {
		var b struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal([]byte(ev.Body), &b); err != nil || ev.Event != "delivery_status" || ev.Form == "" {
			t.Errorf("event %s %s: body %s (%v), form %q; want the feed's JSON with the callback beside it", ev.ID, ev.Event, ev.Body, err, ev.Form)
		}
		steps[b.Status]++
	}
	if len(rows) != 2 || steps["SENT"] != 1 || steps["DELIVERED"] != 1 {
		t.Errorf("%d rows for the message, by step %v; want one row for each of sent and delivered", len(rows), steps)
	}

	// Replies: one number posts, another asks for GET; a reply to a number
	// without an SmsUrl, or to another account's number, posts nothing.
	other := e.addAccount(NewAccount{Name: "Other", Tier: "enterprise", Credits: 10, Currency: "USD", Country: "55"})
	otherAC, otherToken := "AC"+strings.Repeat("cd", 16), "0123456789abcdef0123456789abcdef"
	if err := e.st.CreateTwilioCredential(ctx, domain.TwilioCredential{Sid: otherAC, Kind: domain.TwilioAccountSid,
		AccountID: other.ID, Env: domain.Test, Secret: otherToken, CreatedAt: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	rcv.tokenAt = map[string]string{"/other": otherToken}
	rcv.mu.Unlock()
	for _, n := range []domain.TwilioNumber{
		{AccountID: e.account.ID, Phone: "15005550006", SmsURL: rcv.srv.URL + "/sms", SmsMethod: "POST"},
		{AccountID: e.account.ID, Phone: "15005550007", SmsURL: rcv.srv.URL + "/sms-get?k=v", SmsMethod: "GET"},
		{AccountID: other.ID, Phone: "15005550008", SmsURL: rcv.srv.URL + "/other", SmsMethod: "POST"},
	} {
		n.UpdatedAt = e.clock.Now()
		if err := e.st.SetTwilioNumber(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	reply := func(to, text string, account ...string) string {
		acc := e.account.ID
		if len(account) > 0 {
			acc = account[0]
		}
		if _, err := e.srv.tracker.Receive(ctx, "simulator", provider.Inbound{AccountID: acc, Env: domain.Test,
			From: "5511999990010", To: to, Channel: domain.SMS, Body: text}); err != nil {
			t.Fatal(err)
		}
		return text
	}
	reply("15005550008", "to another account's number")
	reply("15005550009", "to a number without an SmsUrl")
	reply("15005550006", "yes & thanks")
	reply("15005550007", "via GET")
	reply("15005550008", "to the other account", other.ID)
	polltest.Until(t, "the inbound posts", func() bool {
		return len(rcv.at("/sms")) == 1 && len(rcv.at("/sms-get")) == 1 && len(rcv.at("/other")) == 1
	})
	for _, g := range append(rcv.at("/sms"), rcv.at("/sms-get")...) {
		if !g.valid || g.form.Get("AccountSid") != ac || g.form.Get("From") != "+5511999990010" ||
			!strings.HasPrefix(g.form.Get("MessageSid"), "SM") || g.form.Get("NumMedia") != "0" {
			t.Errorf("inbound %s %s: valid %v, %v", g.method, g.path, g.valid, g.form)
		}
	}
	if g := rcv.at("/sms")[0]; g.method != http.MethodPost || g.form.Get("Body") != "yes & thanks" || g.form.Get("To") != "+15005550006" {
		t.Errorf("POST inbound %+v", g)
	}
	if g := rcv.at("/sms-get")[0]; g.method != http.MethodGet || g.form.Get("Body") != "via GET" || g.form.Get("k") != "v" {
		t.Errorf("GET inbound %+v", g)
	}
	// The other account's reply is its own: signed with its token, under
	// its account SID; this account's reply to that number went nowhere.
	if g := rcv.at("/other"); len(g) != 1 || !g[0].valid || g[0].form.Get("AccountSid") != otherAC ||
		g[0].form.Get("Body") != "to the other account" {
		t.Errorf("the other account's inbound %+v", g)
	}

	// The native feed tells the message's statuses, once each, and the
	// replies, in its own JSON, and no Twilio callback.
	feed := e.do("GET", "/api/v1/integration/events", e.testKey, nil)
	var page struct {
		Events []struct {
			Type string `json:"type"`
			Data struct {
				MessageID string `json:"messageId"`
				Status    string `json:"status"`
			} `json:"data"`
		} `json:"events"`
	}
	if err := json.Unmarshal(feed.body, &page); err != nil || feed.status != http.StatusOK {
		t.Fatalf("feed %d %s (%v)", feed.status, feed.body, err)
	}
	kinds := map[string]int{}
	var told []string
	for _, ev := range page.Events {
		kinds[ev.Type]++
		if strings.HasPrefix(ev.Type, "twilio.") {
			t.Errorf("the native feed shows %s", ev.Type)
		}
		if ev.Data.MessageID == m.ID {
			told = append(told, ev.Data.Status)
		}
	}
	if kinds["delivery_status"] != 2 || kinds["message_received"] != 4 || strings.Join(told, " ") != "SENT DELIVERED" {
		t.Errorf("feed kinds %v, the message's statuses %v", kinds, told)
	}
}
