package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Why a webhook is refused (Verify wraps them with details).
var (
	ErrWebhookHeaders   = errors.New("msgsvc: webhook-id, webhook-timestamp or webhook-signature missing")
	ErrWebhookTimestamp = errors.New("msgsvc: webhook timestamp too far from now")
	ErrWebhookSignature = errors.New("msgsvc: no webhook signature matches the secret")
)

// DefaultTolerance is how far a webhook's timestamp may be from the
// receiver's clock: enough for clock skew and slow networks, too little
// for replaying a captured request much later.
const DefaultTolerance = 5 * time.Minute

// VerifyWebhook checks a webhook msgsvc sent (Standard Webhooks): that
// one of its signatures is the HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}"
// under secret (whsec_…), and that its timestamp is within
// DefaultTolerance of now. Pass the body exactly as received.
func VerifyWebhook(secret string, header http.Header, body []byte) error {
	return Verifier{Secrets: []string{secret}}.Verify(header, body)
}

// Verifier checks webhooks against one or more secrets: during a secret
// rotation msgsvc signs with both the old and the new secret, so a
// receiver holding either (or both, here) accepts them.
type Verifier struct {
	Secrets   []string
	Tolerance time.Duration    // default DefaultTolerance
	Now       func() time.Time // default time.Now
}

// Verify checks a webhook's signature and timestamp; the error wraps
// ErrWebhookHeaders, ErrWebhookTimestamp or ErrWebhookSignature, or tells
// that a secret is malformed.
func (v Verifier) Verify(header http.Header, body []byte) error {
	id, ts, sigs := header.Get("webhook-id"), header.Get("webhook-timestamp"), header.Get("webhook-signature")
	if sigs == "" {
		sigs = header.Get("X-Service-Signature")
	}
	if id == "" || ts == "" || sigs == "" {
		return ErrWebhookHeaders
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: webhook-timestamp %q is not Unix seconds", ErrWebhookTimestamp, ts)
	}
	now, tol := time.Now, v.Tolerance
	if v.Now != nil {
		now = v.Now
	}
	if tol <= 0 {
		tol = DefaultTolerance
	}
	if off := now().Sub(time.Unix(secs, 0)); off > tol || off < -tol {
		return fmt.Errorf("%w: it is %s off (tolerance %s); check the receiver's clock", ErrWebhookTimestamp, off.Round(time.Second), tol)
	}
	for _, secret := range v.Secrets {
		key, err := decodeSecret(secret)
		if err != nil {
			return err
		}
		want := sign(key, id, ts, body)
		for _, sig := range strings.Fields(sigs) {
			if hmac.Equal([]byte(sig), []byte(want)) {
				return nil
			}
		}
	}
	return fmt.Errorf("%w (webhook-id %s): is it the account's current secret, and the body unchanged?", ErrWebhookSignature, id)
}

// sign is the Standard Webhooks v1 signature.
func sign(key []byte, id, ts string, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func decodeSecret(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return nil, errors.New("msgsvc: the webhook secret is not whsec_ followed by base64; copy it as msgsvc printed it")
	}
	return key, nil
}

// ParseWebhook reads a webhook as an Event: its webhook-id, its type, its
// time and its body. It does not verify it: call Verify first.
func ParseWebhook(header http.Header, body []byte) (Event, error) {
	var head struct {
		Event      string    `json:"event"`
		Timestamp  time.Time `json:"timestamp"`
		ReceivedAt time.Time `json:"receivedAt"`
	}
	if err := json.Unmarshal(body, &head); err != nil || head.Event == "" {
		return Event{}, fmt.Errorf("msgsvc: the webhook body is not an event: %v", err)
	}
	at := head.Timestamp
	if at.IsZero() {
		at = head.ReceivedAt
	}
	return Event{ID: header.Get("webhook-id"), Type: head.Event, CreatedAt: at, Data: append([]byte(nil), body...)}, nil
}
