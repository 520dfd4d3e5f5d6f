package rbm

import (
	"crypto/hmac"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
)

// envelope is a webhook call's body: the platform's one-time validation
// request ({"clientToken", "secret"}) or a Pub/Sub push of one message,
// whose data is the base64 of a notification.
type envelope struct {
	ClientToken *string `json:"clientToken"`
	Secret      string  `json:"secret"`
	Message     *struct {
		Data      string `json:"data"`
		MessageID string `json:"messageId"`
	} `json:"message"`
	Subscription string `json:"subscription"`
}

// Webhook is the receiver of the platform's calls (POST
// /providers/rbm/webhook). A call is acknowledged with 200 only once the
// Sink stored what it carries; any other answer makes the platform call
// again (for up to 7 days), so a failure of ours loses nothing.
//
//   - Validation: when the webhook is configured, the platform posts the
//     client token and a secret; with the right token the secret is
//     echoed as plain text.
//   - Notifications: X-Goog-Signature must be the base64 HMAC-SHA512,
//     keyed with the client token, of the decoded message data. A missing
//     or wrong signature answers 401 and records nothing.
func (a *Adapter) Webhook() http.Handler { return http.HandlerFunc(a.serveWebhook) }

func (a *Adapter) serveWebhook(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.cfg.MaxWebhookBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		a.refuse(w, r, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "The notification is larger than this receiver takes.")
		return
	case err != nil:
		a.refuse(w, r, http.StatusBadRequest, "VALIDATION_ERROR", "The body could not be read.")
		return
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		a.refuse(w, r, http.StatusBadRequest, "VALIDATION_ERROR", "The body is not a JSON notification.")
		return
	}
	if env.ClientToken != nil && env.Message == nil {
		a.validate(w, r, env)
		return
	}
	if env.Message == nil {
		a.refuse(w, r, http.StatusBadRequest, "VALIDATION_ERROR", "The body has no message.")
		return
	}
	data, err := base64.StdEncoding.DecodeString(env.Message.Data)
	if err != nil {
		a.refuse(w, r, http.StatusBadRequest, "VALIDATION_ERROR", "message.data is not base64.")
		return
	}
	if !a.signed(data, r.Header.Get("X-Goog-Signature")) {
		a.refuse(w, r, http.StatusUnauthorized, "INVALID_SIGNATURE", "X-Goog-Signature is missing or does not match the data.")
		return
	}
	p, err := parseNotification(data)
	if err != nil {
		a.refuse(w, r, http.StatusBadRequest, "VALIDATION_ERROR", "The notification cannot be read: "+err.Error())
		return
	}
	if err := a.record(r, p); err != nil {
		a.log.Error("rbm: notification not stored; the platform will send it again", "err", err)
		writeProblem(w, r, http.StatusInternalServerError, "INTERNAL", "The notification could not be stored; send it again.")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"status":"ok"}`)
}

// validate answers the platform's validation request: the secret, as
// plain text, when the client token is ours.
func (a *Adapter) validate(w http.ResponseWriter, r *http.Request, env envelope) {
	if subtle.ConstantTimeCompare([]byte(*env.ClientToken), []byte(a.cfg.ClientToken)) != 1 {
		a.refuse(w, r, http.StatusUnauthorized, "INVALID_SIGNATURE", "The client token is not this agent's.")
		return
	}
	a.stats.events.WithLabelValues("validation").Inc()
	a.log.Info("rbm: webhook validated by the platform")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, env.Secret)
}

// signed checks X-Goog-Signature against the data.
func (a *Adapter) signed(data []byte, header string) bool {
	got, err := base64.StdEncoding.DecodeString(header)
	if err != nil || len(got) == 0 {
		return false
	}
	mac := hmac.New(sha512.New, []byte(a.cfg.ClientToken))
	mac.Write(data)
	return hmac.Equal(got, mac.Sum(nil))
}

// record hands what a notification means to the Sink.
func (a *Adapter) record(r *http.Request, p parsed) error {
	ctx := r.Context()
	switch {
	case len(p.statuses) > 0:
		a.stats.events.WithLabelValues("status").Inc()
		return a.sink.Statuses(ctx, a.cfg.Name, p.statuses)
	case p.inbound != nil:
		a.stats.events.WithLabelValues("message").Inc()
		in := *p.inbound
		if in.To == "" {
			in.To = a.cfg.AgentID
		}
		return a.sink.Inbound(ctx, a.cfg.Name, in)
	}
	a.stats.events.WithLabelValues("ignored").Inc()
	a.log.Debug("rbm: notification ignored", "why", p.ignored)
	return nil
}

func (a *Adapter) refuse(w http.ResponseWriter, r *http.Request, status int, code, detail string) {
	a.stats.rejected.Inc()
	writeProblem(w, r, status, code, detail)
}

// writeProblem answers in the API's problem+json shape, with a code of its
// catalogue (internal/api/problem.go) and the request id the API's front
// set on the response.
func writeProblem(w http.ResponseWriter, _ *http.Request, status int, code, detail string) {
	p := map[string]any{"type": "about:blank", "title": http.StatusText(status), "status": status, "code": code, "detail": detail}
	if rid := w.Header().Get("X-Request-Id"); rid != "" {
		p["requestId"] = rid
	}
	b, _ := json.Marshal(p)
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
