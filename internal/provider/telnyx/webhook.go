package telnyx

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
)

// event is the part of a messaging webhook msgsvc reads.
type event struct {
	Data struct {
		EventType string `json:"event_type"`
		Payload   struct {
			ID   string `json:"id"`
			From struct {
				PhoneNumber string `json:"phone_number"`
			} `json:"from"`
			To []struct {
				PhoneNumber string `json:"phone_number"`
				Status      string `json:"status"`
			} `json:"to"`
			Text  string `json:"text"`
			Media []struct {
				URL string `json:"url"`
			} `json:"media"`
			Errors []apiError `json:"errors"`
		} `json:"payload"`
	} `json:"data"`
}

// receive takes Telnyx's webhooks, mounted at WebhookPath.
// Each must carry telnyx-signature-ed25519 over telnyx-timestamp|body
// under the account's public key, with a timestamp within 5 minutes;
// anything else is refused with 401 and nothing is recorded.
func (a *Adapter) receive(w http.ResponseWriter, r *http.Request, body []byte) {
	if why := a.verify(r.Header.Get("telnyx-signature-ed25519"), r.Header.Get("telnyx-timestamp"), body); why != "" {
		a.Call.Unsigned(w, r, why)
		return
	}
	var ev event
	if err := json.Unmarshal(body, &ev); err != nil || ev.Data.EventType == "" {
		httpcall.Problem(w, http.StatusBadRequest, "VALIDATION_ERROR", "The body is not a Telnyx webhook event.")
		return
	}
	a.Call.Counts.Callbacks.Add(1)
	var err error
	switch ev.Data.EventType {
	case "message.sent", "message.finalized":
		err = a.status(r, ev)
	case "message.received":
		err = a.inbound(r, ev)
	}
	if err != nil {
		a.Call.NotStored(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, `{"status":"ok"}`+"\n")
}

// verify says why a webhook is refused, "" when its signature is good and
// fresh.
func (a *Adapter) verify(sig, ts string, body []byte) string {
	if sig == "" || ts == "" {
		return "telnyx-signature-ed25519 or telnyx-timestamp is missing."
	}
	secs, err := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
	if err != nil {
		return "telnyx-timestamp is not Unix seconds."
	}
	raw, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || !ed25519.Verify(a.key, signed(ts, body), raw) {
		return "telnyx-signature-ed25519 does not match the timestamp and body under the account's public key."
	}
	if !httpcall.Fresh(time.Unix(secs, 0), a.Call.Now()) {
		return "telnyx-timestamp is more than 5 minutes from this node's clock: refused as a replay."
	}
	return ""
}

func signed(ts string, body []byte) []byte {
	return append([]byte(ts+"|"), body...)
}

// Sign is the telnyx-signature-ed25519 Telnyx sends with body at
// timestamp ts (Unix seconds), for tests and tools.
func Sign(key ed25519.PrivateKey, ts string, body []byte) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, signed(ts, body)))
}

func (a *Adapter) status(r *http.Request, ev event) error {
	p := ev.Data.Payload
	if p.ID == "" || len(p.To) == 0 {
		return nil
	}
	var code, msg string
	if len(p.Errors) > 0 {
		code, msg = p.Errors[0].Code, p.Errors[0].text()
	}
	st, mapped, ok := statusOf(p.To[0].Status, code)
	if !ok {
		return nil
	}
	rep := provider.Status{Ref: p.ID, Status: st, ErrorCode: mapped, At: a.Call.Now().UTC()}
	if mapped != "" {
		rep.ErrorMessage = msg
		if msg == "" {
			rep.ErrorMessage = "Telnyx " + p.To[0].Status
		}
	}
	return a.Sink.Statuses(r.Context(), a.cfg.Name, []provider.Status{rep})
}

// inbound records a message sent to one of the account's numbers; its
// media are Telnyx's addresses, listed after the text.
func (a *Adapter) inbound(r *http.Request, ev event) error {
	p := ev.Data.Payload
	if p.From.PhoneNumber == "" || len(p.To) == 0 {
		return nil
	}
	body := p.Text
	for _, m := range p.Media {
		body = strings.TrimSpace(body + "\n" + m.URL)
	}
	return a.Sink.Inbound(r.Context(), a.cfg.Name, provider.Inbound{From: phone.Address(p.From.PhoneNumber),
		To: phone.Address(p.To[0].PhoneNumber), Channel: domain.SMS, Body: body, At: a.Call.Now().UTC(), Ref: p.ID})
}
