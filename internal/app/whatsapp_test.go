package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider/whatsapp"
	"github.com/msgsvc/msgsvc/internal/provider/whatsapp/whatsapptest"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

const (
	waAppSecret   = "app-secret-for-tests"
	waVerifyToken = "verify-token-for-tests"
	waBusiness    = "15550783881"
)

// whatsAppConfig is a configuration file, as an operator would write it,
// with a WhatsApp provider at apiURL and serve's routing (live WhatsApp
// messages go to it, nothing to the simulator).
func whatsAppConfig(apiURL string) string {
	return fmt.Sprintf(`providers:
  - name: whatsapp
    type: whatsapp
    whatsapp:
      token: test-token
      phoneNumberId: "106540352242922"
      appSecret: %s
      verifyToken: %s
      apiUrl: %s
routes:
  - channel: WHATSAPP
    primary: whatsapp
`, waAppSecret, waVerifyToken, apiURL)
}

// postWhatsApp posts a notification to the WhatsApp webhook, signed with
// secret ("" for no signature).
func (e *env) postWhatsApp(body []byte, secret string) response {
	e.t.Helper()
	var h []string
	if secret != "" {
		h = []string{"X-Hub-Signature-256", whatsapp.Sign(body, secret)}
	}
	return e.do("POST", "/providers/whatsapp/webhook", "", body, h...)
}

func (e *env) addWhatsAppNumber(number string) {
	e.t.Helper()
	now := time.Now()
	if err := e.st.AddSender(context.Background(), domain.Sender{ID: id.New(id.Sender, now), AccountID: e.account.ID,
		Channel: domain.WhatsApp, Value: number, CreatedAt: now}); err != nil {
		e.t.Fatal(err)
	}
}

// lastWhatsAppReply is when phone last wrote to the account on WhatsApp
// (zero: never): the reply that opens the conversation window.
func (e *env) lastWhatsAppReply(phone string) time.Time {
	e.t.Helper()
	at, err := e.st.LastInbound(context.Background(), e.account.ID, domain.Live, phone, domain.WhatsApp)
	if err != nil {
		e.t.Fatal(err)
	}
	return at
}

// A live WhatsApp message crosses to the platform and its story comes
// back through the platform's signed webhook: a reply opens the window, a
// free-form send goes out, the platform's statuses and the recipient's
// button reply come out as signed webhooks to the integrator, and wrongly
// signed notifications change nothing. Against the stand-in platform, and
// against Prism serving Meta's document when MSGSVC_TEST_WHATSAPP_API_URL
// is set.
func TestLiveWhatsAppThroughThePlatform(t *testing.T) {
	platforms := map[string]func(t *testing.T) (url string, sends func() []map[string]any){
		"stand-in": func(t *testing.T) (string, func() []map[string]any) {
			p := whatsapptest.New(t)
			return p.URL, p.Sends
		},
	}
	if u := os.Getenv("MSGSVC_TEST_WHATSAPP_API_URL"); u != "" {
		platforms["prism"] = func(*testing.T) (string, func() []map[string]any) { return u, nil }
	}
	for name, platform := range platforms {
		t.Run(name, func(t *testing.T) {
			forEachDialect(t, func(t *testing.T, dialect string) {
				url, sends := platform(t)
				liveWhatsApp(t, newEnv(t, dialect, envOptions{file: whatsAppConfig(url)}), sends)
			})
		})
	}
}

func liveWhatsApp(t *testing.T, e *env, sends func() []map[string]any) {
	const phone = "5511999990077"
	biz := whatsapptest.Business{DisplayPhoneNumber: "+1 555-078-3881", PhoneNumberID: "106540352242922"}
	e.addWhatsAppNumber(waBusiness)
	if r := send(t, e, e.liveKey, map[string]any{"to": phone, "message": "hi", "type": "WHATSAPP"}); r.status != 422 {
		t.Fatalf("free-form send before the recipient wrote: %d %s", r.status, r.body)
	}
	openWindow(t, e, biz, phone)
	stored := sendWithButton(t, e, biz, phone, sends)
	tapButton(t, e, biz, phone, stored.CampaignID)
	if e.hooks.badSigs != 0 {
		t.Fatalf("%d webhooks with a bad signature", e.hooks.badSigs)
	}
	if r := e.mg("GET", "/readyz", e.member("operator"), nil).json(t); !strings.HasPrefix(fmt.Sprint(r["provider:whatsapp"]), "ok: sent 1") {
		t.Fatalf("readyz %v", r)
	}
	metrics := string(e.do("GET", "/metrics", "", nil).body)
	for _, want := range []string{`whatsapp_up{provider="whatsapp"} 1`, `whatsapp_messages_total{outcome="sent",provider="whatsapp"} 1`,
		`whatsapp_webhooks_total{outcome="bad_signature",provider="whatsapp"} 3`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// openWindow: the recipient writes first; wrongly signed copies are
// refused and not recorded.
func openWindow(t *testing.T, e *env, biz whatsapptest.Business, phone string) {
	hello := biz.Message(phone, e.clock.Now(), map[string]any{"type": "text", "text": map[string]any{"body": "Hello"}})
	for _, secret := range []string{"", "not the app secret"} {
		if r := e.postWhatsApp(hello, secret); r.status != 401 || !strings.Contains(string(r.body), "INVALID_SIGNATURE") {
			t.Fatalf("signed with %q: %d %s", secret, r.status, r.body)
		}
	}
	if at := e.lastWhatsAppReply(phone); !at.IsZero() {
		t.Fatalf("a wrongly signed reply was recorded (%v)", at)
	}
	if r := e.postWhatsApp(hello, waAppSecret); r.status != 200 {
		t.Fatalf("reply: %d %s", r.status, r.body)
	}
	if at := e.lastWhatsAppReply(phone); at.IsZero() {
		t.Fatal("the reply was not recorded")
	}
}

// sendWithButton: in the open window a free-form message with a button
// goes out; the platform's statuses come back as webhooks, a forged
// "failed" changes nothing.
func sendWithButton(t *testing.T, e *env, biz whatsapptest.Business, phone string, sends func() []map[string]any) domain.Message {
	r := send(t, e, e.liveKey, map[string]any{"to": phone, "type": "WHATSAPP", "message": "Confirm the visit?",
		"buttons": []any{map[string]any{"type": "reply", "title": "Yes", "payload": "visit-yes"}}, "callbackUrl": e.hooks.url()})
	if r.status != 202 {
		t.Fatalf("send in the window: %d %s", r.status, r.body)
	}
	mid := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
	if m := finalStatus(t, e, e.liveKey, mid, "SENT"); m["provider"] != "whatsapp" || m["channel"] != "WHATSAPP" {
		t.Fatalf("message %v", m)
	}
	if sends != nil {
		if s := sends(); len(s) != 1 || s[0]["to"] != phone || s[0]["type"] != "interactive" {
			t.Fatalf("the platform got %v", s)
		}
	}
	stored, err := e.st.MessageByID(context.Background(), mid)
	if err != nil || !strings.HasPrefix(stored.ProviderRef, "wamid.") {
		t.Fatalf("provider reference %q %v", stored.ProviderRef, err)
	}
	forged := biz.Status(stored.ProviderRef, "failed", phone, e.clock.Now(), 131047, "Re-engagement message")
	if r := e.postWhatsApp(forged, "guessed"); r.status != 401 {
		t.Fatalf("forged status: %d", r.status)
	}
	for _, st := range []string{"delivered", "read"} {
		if r := e.postWhatsApp(biz.Status(stored.ProviderRef, st, phone, e.clock.Now(), 0, ""), waAppSecret); r.status != 200 {
			t.Fatalf("%s: %d %s", st, r.status, r.body)
		}
	}
	finalStatus(t, e, e.liveKey, mid, "READ")
	polltest.For(t, "delivery webhooks", 10*time.Second, func() bool { return len(e.hooks.forMessage(mid)) >= 3 })
	if got := strings.Join(sortedByRank(e.hooks.forMessage(mid)), ","); got != "SENT,DELIVERED,READ" {
		t.Fatalf("webhooks %s", got)
	}
	for _, h := range e.hooks.all() {
		if h.payload["event"] == "delivery_status" && (h.payload["provider"] != "whatsapp" || h.payload["errorCode"] != nil) {
			t.Fatalf("webhook %s", h.raw)
		}
	}
	return stored
}

// tapButton: the recipient taps the button and the integrator gets its
// payload, once even if the platform delivers the notification twice.
func tapButton(t *testing.T, e *env, biz whatsapptest.Business, phone, campaignID string) {
	tap := biz.Message(phone, e.clock.Now(), map[string]any{"type": "interactive", "interactive": map[string]any{
		"type": "button_reply", "button_reply": map[string]any{"id": "visit-yes", "title": "Yes"}}})
	for range 2 {
		if r := e.postWhatsApp(tap, waAppSecret); r.status != 200 {
			t.Fatalf("button reply: %d %s", r.status, r.body)
		}
	}
	evs, err := e.st.EventsForCampaign(context.Background(), e.account.ID, campaignID, 100)
	if err != nil {
		t.Fatal(err)
	}
	replies := 0
	for _, ev := range evs {
		if ev.Event == webhook.MessageReceived {
			replies++
		}
	}
	if replies != 1 {
		t.Fatalf("%d reply events for one reply delivered twice", replies)
	}
	reply := e.hooks.first("the reply's webhook", isReply)
	if reply["message"] != "visit-yes" || reply["channel"] != "WHATSAPP" || reply["phone"] != phone || reply["campaignId"] != campaignID {
		t.Fatalf("reply webhook %v", reply)
	}
}

// The platform's handshake with the verify token.
func TestWhatsAppWebhookVerification(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{file: whatsAppConfig(whatsapptest.New(t).URL)})
	ok := e.do("GET", "/providers/whatsapp/webhook?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token="+waVerifyToken, "", nil)
	if ok.status != 200 || string(ok.body) != "1158201444" {
		t.Fatalf("handshake: %d %s", ok.status, ok.body)
	}
	bad := e.do("GET", "/providers/whatsapp/webhook?hub.mode=subscribe&hub.challenge=1&hub.verify_token=guess", "", nil)
	if bad.status != 403 || bad.header.Get("X-Request-Id") == "" || !bytes.Contains(bad.body, []byte(bad.header.Get("X-Request-Id"))) {
		t.Fatalf("wrong token: %d %s", bad.status, bad.body)
	}
}

// Every webhook example of Meta's document, posted signed, comes out to
// the integrator as the message_received webhook the adapter's table says
// (and the examples that are no user message as none).
func TestWhatsAppDocumentExamplesReachTheIntegrator(t *testing.T) {
	examples := whatsapptest.WebhookExamples(t)
	p := whatsapptest.New(t)
	e := newEnv(t, "sqlite", envOptions{file: whatsAppConfig(p.URL)})
	e.addWhatsAppNumber(waBusiness)
	const sender = "16505551234" // every example's user
	r := send(t, e, e.liveKey, map[string]any{"to": sender, "type": "WHATSAPP", "callbackUrl": e.hooks.url(),
		"template": map[string]any{"name": "a", "language": "en"}})
	if r.status != 202 {
		t.Fatalf("template send: %d %s", r.status, r.body)
	}
	var want []string
	for name, body := range examples {
		text, known := whatsapptest.ExampleReply(name, p.URL)
		if !known {
			t.Fatalf("example %q is not in the table", name)
		}
		if text != "" {
			want = append(want, text)
		}
		// The document's examples share message ids, which the platform's
		// never do; a repeated id would (rightly) be taken as a repeat.
		body = bytes.ReplaceAll(body, []byte(`"id":"wamid.`), []byte(`"id":"wamid.`+strings.ReplaceAll(name, " ", "")))
		if r := e.postWhatsApp(body, waAppSecret); r.status != 200 {
			t.Fatalf("%s: %d %s", name, r.status, r.body)
		}
	}
	var got []string
	polltest.For(t, "a webhook per example", 10*time.Second, func() bool {
		got = got[:0]
		for _, h := range e.hooks.all() {
			if h.payload["event"] == "message_received" {
				got = append(got, h.payload["message"].(string))
			}
		}
		return len(got) >= len(want)
	})
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("replies\n got %q\nwant %q", got, want)
	}
	for _, h := range e.hooks.all() {
		if h.payload["event"] == "message_received" && (h.payload["channel"] != "WHATSAPP" || h.payload["phone"] != sender ||
			h.payload["campaignId"] == nil) {
			t.Fatalf("webhook %s", h.raw)
		}
	}
}
