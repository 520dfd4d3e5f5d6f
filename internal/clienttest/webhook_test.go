package client_test

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/client"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// signed builds the headers msgsvc sends, with the service's own signer,
// signed by every given secret (two during a rotation).
func signed(t *testing.T, at time.Time, body []byte, secrets ...string) http.Header {
	t.Helper()
	var keys [][]byte
	for _, s := range secrets {
		k, err := webhook.DecodeSecret(s)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	h := http.Header{}
	h.Set("webhook-id", "evt_01JD8Z6V0C2E4G6I8K0M2O4Q6S")
	h.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	sig := webhook.SignatureHeader(keys, "evt_01JD8Z6V0C2E4G6I8K0M2O4Q6S", at.Unix(), body)
	h.Set("webhook-signature", sig)
	h.Set("X-Service-Signature", sig)
	return h
}

func TestVerifyWebhook(t *testing.T) {
	oldSecret, _ := webhook.NewSecret()
	newSecret, _ := webhook.NewSecret()
	now := time.Now()
	body := []byte(`{"event":"delivery_status","messageId":"msg_1","status":"SENT","timestamp":"2030-01-01T00:00:00.000Z"}`)
	cases := []struct {
		name    string
		secret  string
		header  http.Header
		body    []byte
		wantErr error
	}{
		{"signed with the secret", oldSecret, signed(t, now, body, oldSecret), body, nil},
		{"rotation: old secret", oldSecret, signed(t, now, body, oldSecret, newSecret), body, nil},
		{"rotation: new secret", newSecret, signed(t, now, body, oldSecret, newSecret), body, nil},
		{"another secret", newSecret, signed(t, now, body, oldSecret), body, client.ErrWebhookSignature},
		{"body changed", oldSecret, signed(t, now, body, oldSecret), append([]byte(" "), body...), client.ErrWebhookSignature},
		{"too old", oldSecret, signed(t, now.Add(-6*time.Minute), body, oldSecret), body, client.ErrWebhookTimestamp},
		{"from the future", oldSecret, signed(t, now.Add(6*time.Minute), body, oldSecret), body, client.ErrWebhookTimestamp},
		{"within tolerance", oldSecret, signed(t, now.Add(-4*time.Minute), body, oldSecret), body, nil},
		{"no headers", oldSecret, http.Header{}, body, client.ErrWebhookHeaders},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := client.VerifyWebhook(c.secret, c.header, c.body)
			if (c.wantErr == nil) != (err == nil) || (c.wantErr != nil && !errors.Is(err, c.wantErr)) {
				t.Errorf("error %v, want %v", err, c.wantErr)
			}
		})
	}
	// A receiver holding both secrets accepts either signature alone.
	v := client.Verifier{Secrets: []string{oldSecret, newSecret}}
	for _, s := range []string{oldSecret, newSecret} {
		if err := v.Verify(signed(t, now, body, s), body); err != nil {
			t.Errorf("verifier with both secrets: %v", err)
		}
	}
	// Only X-Service-Signature (receivers behind proxies that drop it).
	h := signed(t, now, body, oldSecret)
	h.Del("webhook-signature")
	if err := client.VerifyWebhook(oldSecret, h, body); err != nil {
		t.Errorf("X-Service-Signature alone: %v", err)
	}
	if err := client.VerifyWebhook("not a secret!", signed(t, now, body, oldSecret), body); err == nil || errors.Is(err, client.ErrWebhookSignature) {
		t.Errorf("a malformed secret: %v, want it named", err)
	}
	ev, err := client.ParseWebhook(signed(t, now, body, oldSecret), body)
	if err != nil || ev.ID != "evt_01JD8Z6V0C2E4G6I8K0M2O4Q6S" || ev.Type != client.EventDeliveryStatus || ev.CreatedAt.Year() != 2030 {
		t.Errorf("parse %+v %v", ev, err)
	}
}
