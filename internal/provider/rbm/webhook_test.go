package rbm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
	"github.com/msgsvc/msgsvc/internal/provider/rbm/rbmtest"
)

// post makes a webhook call and returns the answer.
func post(t *testing.T, a *Adapter, body []byte, signature string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("POST", "/providers/rbm/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if signature != "" {
		req.Header.Set("X-Goog-Signature", signature)
	}
	w := httptest.NewRecorder()
	w.Header().Set("X-Request-Id", "req_test")
	a.Webhook().ServeHTTP(w, req)
	return w
}

// The platform's validation request is answered with its secret, as plain
// text, only for the agent's client token.
func TestWebhookValidation(t *testing.T) {
	r := newRig(t, nil)
	w := post(t, r.a, []byte(`{"clientToken":"`+testToken+`","secret":"1234567890"}`), "")
	if w.Code != 200 || w.Body.String() != "1234567890" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("%d %q %s", w.Code, w.Body, w.Header())
	}
	w = post(t, r.a, []byte(`{"clientToken":"not-ours","secret":"1234567890"}`), "")
	if w.Code != 401 || strings.Contains(w.Body.String(), "1234567890") {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
}

// Signed notifications become reports: DELIVERED and READ statuses by the
// platform's message id, an expiry the platform enforced as FAILED
// EXPIRED, and what users send as replies with a readable text.
func TestWebhookNotifications(t *testing.T) {
	r := newRig(t, nil)
	const phone, mid = "5511999990004", "3f1c9f2e-6a59-5d6b-9c3e-2b4f5e6a7b8c"
	at := time.Date(2026, 11, 21, 10, 0, 1, 500_000_000, time.UTC)
	ev := func(m map[string]any) map[string]any { m["sendTime"] = at.Format(time.RFC3339Nano); return m }
	cases := []struct {
		name   string
		event  any
		status *provider.Status
		reply  string
	}{
		{"delivered", ev(rbmtest.UserEvent(phone, testAgent, mid, "DELIVERED")), &provider.Status{Ref: mid, Status: domain.Delivered, At: at}, ""},
		{"read", ev(rbmtest.UserEvent(phone, testAgent, mid, "READ")), &provider.Status{Ref: mid, Status: domain.Read, At: at}, ""},
		{"expired and taken back", ev(rbmtest.ServerEvent(phone, testAgent, mid, "TTL_EXPIRATION_REVOKED")),
			&provider.Status{Ref: mid, Status: domain.Failed, ErrorCode: domain.CodeExpired,
				ErrorMessage: "not delivered before its validity ended; the platform took it back", At: at}, ""},
		{"text", ev(rbmtest.UserText(phone, testAgent, "Where is my order?")), nil, "Where is my order?"},
		{"suggested reply", ev(map[string]any{"senderPhoneNumber": "+" + phone, "messageId": "u1", "agentId": testAgent,
			"suggestionResponse": map[string]any{"postbackData": "confirm-42", "text": "Yes", "type": "REPLY"}}), nil, "confirm-42"},
		{"location", ev(map[string]any{"senderPhoneNumber": "+" + phone, "messageId": "u2", "agentId": testAgent,
			"location": map[string]any{"latitude": -23.5505, "longitude": -46.6333}}), nil, "Location: -23.5505,-46.6333"},
		{"file", ev(map[string]any{"senderPhoneNumber": "+" + phone, "messageId": "u3", "agentId": testAgent,
			"userFile": map[string]any{"payload": map[string]any{"mimeType": "image/jpeg", "fileSizeBytes": 1234,
				"fileUri": "https://rcs-user-content.example/abc", "fileName": "photo.jpg"}}}), nil,
			"File: photo.jpg (image/jpeg, 1234 bytes) https://rcs-user-content.example/abc"},
		{"typing is ignored", ev(rbmtest.UserEvent(phone, testAgent, "", "IS_TYPING")), nil, ""},
		{"a tapped link is not a reply", ev(map[string]any{"senderPhoneNumber": "+" + phone, "messageId": "u4", "agentId": testAgent,
			"suggestionResponse": map[string]any{"postbackData": "url:0", "text": "Track", "type": "ACTION"}}), nil, ""},
		{"revocation too late is ignored", ev(rbmtest.ServerEvent(phone, testAgent, mid, "TTL_EXPIRATION_REVOKE_FAILED")), nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r.sink = &providertest.Sink{}
			r.a.sink = r.sink
			n := rbmtest.Notify(testToken, c.event)
			if w := post(t, r.a, n.Body, n.Signature); w.Code != 200 {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			sts, ins := r.sink.Got()
			switch {
			case c.status != nil:
				if len(sts) != 1 || len(ins) != 0 || sts[0] != *c.status {
					t.Fatalf("statuses %+v inbound %+v", sts, ins)
				}
			case c.reply != "":
				want := provider.Inbound{From: phone, To: testAgent, Channel: domain.RCS, Body: c.reply, At: at}
				if len(ins) == 1 {
					want.Ref = ins[0].Ref
				}
				if len(ins) != 1 || len(sts) != 0 || ins[0] != want || want.Ref == "" {
					t.Fatalf("inbound %+v, want %+v", ins, want)
				}
			default:
				if len(sts)+len(ins) != 0 {
					t.Fatalf("recorded %+v %+v", sts, ins)
				}
			}
		})
	}
}

// A missing or wrong signature, or a malformed body, records nothing; a
// failure to store answers 500 so that the platform sends it again.
func TestWebhookRefusals(t *testing.T) {
	r := newRig(t, func(c *Config) { c.MaxWebhookBody = 4096 })
	good := rbmtest.Notify(testToken, rbmtest.UserText("5511999990004", testAgent, "hi"))
	other := rbmtest.Notify("another-token", rbmtest.UserText("5511999990004", testAgent, "hi"))
	tampered := bytes.Replace(good.Body, []byte(`"data":"`), []byte(`"data":"AAAA`), 1)
	cases := []struct {
		name, sig string
		body      []byte
		status    int
		code      string
	}{
		{"no signature", "", good.Body, 401, "INVALID_SIGNATURE"},
		{"signed with another token", other.Signature, good.Body, 401, "INVALID_SIGNATURE"},
		{"signature not base64", "%%%", good.Body, 401, "INVALID_SIGNATURE"},
		{"data changed", good.Signature, tampered, 401, "INVALID_SIGNATURE"},
		{"not JSON", good.Signature, []byte("{"), 400, "VALIDATION_ERROR"},
		{"no message", good.Signature, []byte(`{"subscription":"s"}`), 400, "VALIDATION_ERROR"},
		{"data not base64", good.Signature, []byte(`{"message":{"data":"***"}}`), 400, "VALIDATION_ERROR"},
		{"too large", good.Signature, bytes.Repeat([]byte(" "), 5000), 413, "PAYLOAD_TOO_LARGE"},
	}
	for _, c := range cases {
		w := post(t, r.a, c.body, c.sig)
		var p struct {
			Status    int
			Code      string
			RequestID string
		}
		_ = json.Unmarshal(w.Body.Bytes(), &p)
		if w.Code != c.status || p.Status != c.status || p.Code != c.code || p.RequestID != "req_test" ||
			w.Header().Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %s %s", c.name, w.Code, w.Header().Get("Content-Type"), w.Body)
		}
	}
	signedJunk := []byte(`{"senderPhoneNumber":"+55abc","text":"x"}`)
	junk := rbmtest.Notify(testToken, signedJunk)
	if w := post(t, r.a, junk.Body, junk.Signature); w.Code != 400 {
		t.Errorf("signed but malformed: %d", w.Code)
	}
	if sts, ins := r.sink.Got(); len(sts)+len(ins) != 0 {
		t.Fatalf("recorded %+v %+v", sts, ins)
	}
	if got := metric(t, r.a, "rbm_webhook_rejected_total", nil); got != float64(len(cases)+1) {
		t.Fatalf("rejected %v", got)
	}
	r.sink.Fail(errStore)
	if w := post(t, r.a, good.Body, good.Signature); w.Code != 500 {
		t.Fatalf("store down: %d %s", w.Code, w.Body)
	}
	r.sink.Fail(nil)
	if w := post(t, r.a, good.Body, good.Signature); w.Code != 200 {
		t.Fatalf("retry: %d %s", w.Code, w.Body)
	}
}

// No secret reaches the log: not the client token, not the key, not an
// access token, whatever fails.
func TestSecretsNeverLogged(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	o := rcs("msg_1", "5511999990012", "hi", domain.Content{})
	r.a.Submit(ctx, []provider.Outbound{o})
	r.p.ForgetTokens()
	r.a.Submit(ctx, []provider.Outbound{rcs("msg_2", "5511999990012", "hi", domain.Content{})})
	r.p.RefuseTokens(5)
	r.a.dropToken()
	if err := r.a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	r.a.Submit(ctx, []provider.Outbound{rcs("msg_3", "5511999990012", "hi", domain.Content{})})
	post(t, r.a, []byte(`{"clientToken":"`+testToken+`","secret":"s"}`), "")
	post(t, r.a, []byte(`{"clientToken":"guess","secret":"s"}`), "")
	var sa serviceAccount
	_ = json.Unmarshal(r.p.Credentials(), &sa)
	polltest.Until(t, "the log to say there is no access token yet", func() bool { return strings.Contains(r.log.String(), "no access token yet") })
	logText := r.log.String()
	keyLine := strings.Split(sa.PrivateKey, "\n")[1]
	for _, secret := range []string{testToken, keyLine, "ya29.", base64.StdEncoding.EncodeToString([]byte(testToken))} {
		if strings.Contains(logText, secret) {
			t.Fatalf("the log shows a secret %q:\n%s", secret, logText)
		}
	}
	if !strings.Contains(logText, "invalid_grant") {
		t.Fatalf("the log does not say why:\n%s", logText)
	}
}

// The platform delivers a notification at least once: a user message
// keeps the platform's identity of it (sender and the client's message
// id) as its Ref, by which the sink records a repeat once.
func TestRepliesNameTheirMessage(t *testing.T) {
	r := newRig(t, nil)
	n := rbmtest.Notify(testToken, rbmtest.UserText("5511999990004", testAgent, "first"))
	other := rbmtest.Notify(testToken, rbmtest.UserText("5511999990004", testAgent, "second"))
	for _, call := range []rbmtest.Notification{n, n, other} {
		if w := post(t, r.a, call.Body, call.Signature); w.Code != 200 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	_, ins := r.sink.Got()
	if len(ins) != 3 || ins[0].Ref == "" || ins[0].Ref != ins[1].Ref || ins[2].Ref == ins[0].Ref ||
		!strings.HasPrefix(ins[0].Ref, "+5511999990004/") {
		t.Fatalf("refs %q %q %q", ins[0].Ref, ins[1].Ref, ins[2].Ref)
	}
}
