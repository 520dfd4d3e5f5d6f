package whatsapp

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
)

// maxNotification bounds a webhook body; the platform's batches are far
// smaller.
const maxNotification = 1 << 20

// Webhook is the receiver of the platform's webhook calls, mounted at
// /providers/whatsapp/webhook: GET answers the verification handshake,
// POST takes notifications signed with X-Hub-Signature-256.
func (c *Client) Webhook() http.Handler { return receiver{c} }

type receiver struct{ c *Client }

func (rc receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		rc.verify(w, r)
	case http.MethodPost:
		rc.notify(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		httpcall.Problem(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "This path takes GET and POST.")
	}
}

// verify echoes hub.challenge when the platform subscribes with our verify
// token (compared in constant time).
func (rc receiver) verify(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	token := q.Get("hub.verify_token")
	if q.Get("hub.mode") != "subscribe" || subtle.ConstantTimeCompare([]byte(token), []byte(rc.c.cfg.VerifyToken)) != 1 {
		rc.c.log.Warn("whatsapp webhook verification refused: wrong mode or verify token", "provider", rc.c.cfg.Name)
		httpcall.Problem(w, http.StatusForbidden, "FORBIDDEN", "The verification request does not carry this node's verify token.")
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, q.Get("hub.challenge"))
}

// notify checks the signature, then hands statuses and replies to the
// sink, and answers 200 only once the sink stored them all, so that the
// platform sends again what was not stored.
func (rc receiver) notify(w http.ResponseWriter, r *http.Request) {
	c := rc.c
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxNotification))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpcall.Problem(w, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "The notification is larger than 1 MiB.")
			return
		}
		httpcall.Problem(w, http.StatusBadRequest, "VALIDATION_ERROR", "The notification body could not be read.")
		return
	}
	if !validSignature(r.Header.Get("X-Hub-Signature-256"), body, c.cfg.AppSecret) {
		c.counts.badSignatures.Add(1)
		c.log.Warn("whatsapp webhook with a missing or wrong X-Hub-Signature-256: ignored", "provider", c.cfg.Name,
			"remote", r.RemoteAddr)
		httpcall.Problem(w, http.StatusUnauthorized, "INVALID_SIGNATURE", "X-Hub-Signature-256 is missing or does not match the body.")
		return
	}
	p, err := parse(body, c.cfg.APIURL, c.now().UTC())
	if err != nil {
		httpcall.Problem(w, http.StatusBadRequest, "VALIDATION_ERROR", "The body is not a WhatsApp Business Account notification.")
		return
	}
	c.counts.notifications.Add(1)
	ctx := r.Context()
	if len(p.statuses) > 0 {
		if err := c.deps.Sink.Statuses(ctx, c.cfg.Name, p.statuses); err != nil {
			rc.failed(w, "statuses", err)
			return
		}
	}
	for _, in := range p.inbound {
		if err := c.deps.Sink.Inbound(ctx, c.cfg.Name, in); err != nil {
			rc.failed(w, "reply", err)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, `{"status":"ok"}`+"\n")
}

func (rc receiver) failed(w http.ResponseWriter, what string, err error) {
	rc.c.log.Error("whatsapp notification not stored; the platform will send it again", "provider", rc.c.cfg.Name,
		"what", what, "err", err)
	httpcall.Problem(w, http.StatusInternalServerError, "INTERNAL", "The notification could not be stored; send it again.")
}

// validSignature checks X-Hub-Signature-256: "sha256=" and the hex
// HMAC-SHA256 of the raw body keyed with the app secret.
func validSignature(header string, body []byte, secret string) bool {
	hexSum, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSum)
	if err != nil {
		return false
	}
	return hmac.Equal(got, mac(body, secret))
}

// Sign is the X-Hub-Signature-256 value of body for secret, as the
// platform computes it (for tests and tools that post notifications).
func Sign(body []byte, secret string) string {
	return "sha256=" + hex.EncodeToString(mac(body, secret))
}

func mac(body []byte, secret string) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write(body)
	return h.Sum(nil)
}
