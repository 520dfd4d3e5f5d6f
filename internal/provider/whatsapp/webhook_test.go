package whatsapp

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/whatsapp/whatsapptest"
)

var business = whatsapptest.Business{DisplayPhoneNumber: "15550783881", PhoneNumberID: testPhoneID}

func post(t *testing.T, r *rig, body []byte, signature string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/providers/whatsapp/webhook", bytes.NewReader(body))
	if signature != "" {
		req.Header.Set("X-Hub-Signature-256", signature)
	}
	w := httptest.NewRecorder()
	r.c.Webhook().ServeHTTP(w, req)
	return w
}

func get(t *testing.T, r *rig, mode, token, challenge string) *httptest.ResponseRecorder {
	t.Helper()
	q := url.Values{"hub.mode": {mode}, "hub.verify_token": {token}, "hub.challenge": {challenge}}
	w := httptest.NewRecorder()
	r.c.Webhook().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/providers/whatsapp/webhook?"+q.Encode(), nil))
	return w
}

func problemCode(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var p struct{ Code string }
	if w.Header().Get("Content-Type") != "application/problem+json" || json.Unmarshal(w.Body.Bytes(), &p) != nil {
		t.Fatalf("not problem+json: %s %s", w.Header().Get("Content-Type"), w.Body)
	}
	return p.Code
}

func TestVerificationHandshake(t *testing.T) {
	r := newRig(t, nil)
	if w := get(t, r, "subscribe", testVerifyToken, "1158201444"); w.Code != 200 || w.Body.String() != "1158201444" ||
		!strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("good handshake: %d %q", w.Code, w.Body)
	}
	for _, c := range [][2]string{{"subscribe", "wrong"}, {"subscribe", ""}, {"unsubscribe", testVerifyToken}} {
		if w := get(t, r, c[0], c[1], "1"); w.Code != 403 || problemCode(t, w) != "FORBIDDEN" {
			t.Fatalf("%v: %d %s", c, w.Code, w.Body)
		}
	}
}

// A missing or wrong signature is refused and nothing reaches the sink.
func TestWrongSignatureRecordsNothing(t *testing.T) {
	r := newRig(t, nil)
	body := business.Status("wamid.A", "delivered", "5511999990000", time.Unix(1750000000, 0), 0, "")
	reply := business.Message("5511999990000", time.Unix(1750000000, 0), map[string]any{"type": "text", "text": map[string]any{"body": "STOP"}})
	for name, sig := range map[string]string{"missing": "", "other secret": Sign(body, "not the secret"),
		"no prefix": strings.TrimPrefix(Sign(body, testAppSecret), "sha256="), "not hex": "sha256=zz",
		"another body": Sign(reply, testAppSecret), "sha1": "sha1=" + strings.TrimPrefix(Sign(body, testAppSecret), "sha256=")} {
		if w := post(t, r, body, sig); w.Code != 401 || problemCode(t, w) != "INVALID_SIGNATURE" {
			t.Fatalf("%s: %d %s", name, w.Code, w.Body)
		}
	}
	if w := post(t, r, reply, Sign(body, testAppSecret)); w.Code != 401 {
		t.Fatalf("reply with the status's signature: %d", w.Code)
	}
	if s, in := r.sink.Got(); len(s)+len(in) != 0 {
		t.Fatalf("recorded %v %v", s, in)
	}
	if h := r.c.Health(); h.BadSignatures != 7 || h.Notifications != 0 {
		t.Fatalf("health %+v", h)
	}
}

// Statuses become our reports by the platform's message id; a failed one
// carries its error mapped to our code.
func TestStatuses(t *testing.T) {
	r := newRig(t, nil)
	at := time.Unix(1750000000, 0).UTC()
	for _, c := range []struct {
		status string
		code   int
		want   provider.Status
	}{
		{"sent", 0, provider.Status{Ref: "wamid.A", Status: domain.Sent, At: at}},
		{"delivered", 0, provider.Status{Ref: "wamid.A", Status: domain.Delivered, At: at}},
		{"read", 0, provider.Status{Ref: "wamid.A", Status: domain.Read, At: at}},
		{"failed", 131047, provider.Status{Ref: "wamid.A", Status: domain.Failed, At: at, ErrorCode: domain.CodeOutsideWindow,
			ErrorMessage: "WhatsApp error 131047: Re-engagement message: Re-engagement message (details)"}},
		{"failed", 131026, provider.Status{Ref: "wamid.A", Status: domain.Failed, At: at, ErrorCode: domain.CodeInvalidNumber,
			ErrorMessage: "WhatsApp error 131026: Undeliverable: Undeliverable (details)"}},
		{"failed", 130429, provider.Status{Ref: "wamid.A", Status: domain.Failed, At: at, ErrorCode: domain.CodeProviderError,
			ErrorMessage: "WhatsApp error 130429: Rate limit hit: Rate limit hit (details)"}},
	} {
		title := map[int]string{131047: "Re-engagement message", 131026: "Undeliverable", 130429: "Rate limit hit"}[c.code]
		body := business.Status("wamid.A", c.status, "5511999990000", at, c.code, title)
		if w := post(t, r, body, Sign(body, testAppSecret)); w.Code != 200 || w.Body.String() != `{"status":"ok"}`+"\n" {
			t.Fatalf("%s: %d %s", c.status, w.Code, w.Body)
		}
		s, _ := r.sink.Got()
		if got := s[len(s)-1]; got != c.want {
			t.Fatalf("%s %d:\n got %+v\nwant %+v", c.status, c.code, got, c.want)
		}
	}
}

// The replies users send, as the integrator receives them.
func TestReplies(t *testing.T) {
	r := newRig(t, nil)
	at := time.Unix(1750000000, 0).UTC()
	for _, c := range []struct {
		name string
		msg  map[string]any
		want string
	}{
		{"text", map[string]any{"type": "text", "text": map[string]any{"body": "Yes please"}}, "Yes please"},
		{"button reply", map[string]any{"type": "interactive", "interactive": map[string]any{"type": "button_reply",
			"button_reply": map[string]any{"id": "visit-yes", "title": "Yes"}}}, "visit-yes"},
		{"list reply", map[string]any{"type": "interactive", "interactive": map[string]any{"type": "list_reply",
			"list_reply": map[string]any{"id": "m9", "title": "09:00", "description": "First slot"}}}, "m9"},
		{"template button", map[string]any{"type": "button", "button": map[string]any{"payload": "STOP", "text": "Stop promotions"}}, "STOP"},
		{"document", map[string]any{"type": "document", "document": map[string]any{"id": "77", "filename": "cv.pdf",
			"mime_type": "application/pdf", "sha256": "x"}}, "[document cv.pdf application/pdf] " + r.p.URL + "/77"},
	} {
		body := business.Message("5511999990000", at, c.msg)
		if w := post(t, r, body, Sign(body, testAppSecret)); w.Code != 200 {
			t.Fatalf("%s: %d %s", c.name, w.Code, w.Body)
		}
		_, in := r.sink.Got()
		got := in[len(in)-1]
		want := provider.Inbound{From: "5511999990000", To: "15550783881", Channel: domain.WhatsApp, Body: c.want, At: at, Ref: got.Ref}
		if got != want || !strings.HasPrefix(got.Ref, "wamid.") {
			t.Fatalf("%s:\n got %+v\nwant %+v", c.name, got, want)
		}
	}
}

// When the sink cannot store, the platform is told to send again.
func TestSinkFailureAnswers500(t *testing.T) {
	r := newRig(t, nil)
	r.sink.Fail(errors.New("database is down"))
	body := business.Status("wamid.A", "delivered", "5511999990000", time.Now(), 0, "")
	if w := post(t, r, body, Sign(body, testAppSecret)); w.Code != 500 || problemCode(t, w) != "INTERNAL" {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
}

func TestNotANotification(t *testing.T) {
	r := newRig(t, nil)
	for _, body := range []string{`not json`, `{"object":"page","entry":[]}`, `[]`} {
		if w := post(t, r, []byte(body), Sign([]byte(body), testAppSecret)); w.Code != 400 || problemCode(t, w) != "VALIDATION_ERROR" {
			t.Fatalf("%s: %d %s", body, w.Code, w.Body)
		}
	}
	big := bytes.Repeat([]byte(" "), maxNotification+1)
	if w := post(t, r, big, Sign(big, testAppSecret)); w.Code != 413 || problemCode(t, w) != "PAYLOAD_TOO_LARGE" {
		t.Fatalf("oversized: %d %s", w.Code, w.Body)
	}
}
