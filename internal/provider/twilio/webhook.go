package twilio

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
)

// receive takes Twilio's callbacks, mounted at StatusPath and
// InboundPath. Each must carry X-Twilio-Signature over PublicURL+path and
// the form; anything else is refused with 401 and nothing is recorded.
func (a *Adapter) receive(w http.ResponseWriter, r *http.Request, body []byte) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		httpcall.Problem(w, http.StatusBadRequest, "VALIDATION_ERROR", "The callback is not a form.")
		return
	}
	// The signed address is the one Twilio was given, not the one the
	// request reached us at: a proxy in between may have rewritten it.
	if !ValidSignature(r.Header.Get("X-Twilio-Signature"), a.cfg.AuthToken, a.cfg.PublicURL+r.URL.RequestURI(), form) {
		a.Call.Unsigned(w, r, "X-Twilio-Signature is missing or does not match the public URL and the parameters.")
		return
	}
	a.Call.Counts.Callbacks.Add(1)
	switch {
	case strings.HasSuffix(r.URL.Path, "/status"):
		a.status(w, r, form)
	case strings.HasSuffix(r.URL.Path, "/inbound"):
		a.inbound(w, r, form)
	default:
		httpcall.Problem(w, http.StatusNotFound, "NOT_FOUND", "Twilio callbacks go to /providers/twilio/status or /inbound.")
	}
}

func (a *Adapter) status(w http.ResponseWriter, r *http.Request, f url.Values) {
	sid := f.Get("MessageSid")
	if sid == "" {
		sid = f.Get("SmsSid")
	}
	if sid == "" {
		httpcall.Problem(w, http.StatusBadRequest, "VALIDATION_ERROR", "The status callback has no MessageSid.")
		return
	}
	st, code, ok := statusOf(f.Get("MessageStatus"), f.Get("ErrorCode"))
	if ok {
		rep := provider.Status{Ref: sid, Status: st, ErrorCode: code, At: a.Call.Now().UTC()}
		if code != "" {
			rep.ErrorMessage = "Twilio " + f.Get("MessageStatus")
			if ec := f.Get("ErrorCode"); ec != "" {
				rep.ErrorMessage += " (error " + ec + ")"
			}
		}
		if err := a.Sink.Statuses(r.Context(), a.cfg.Name, []provider.Status{rep}); err != nil {
			a.Call.NotStored(w, err)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// inbound records a message sent to one of the account's numbers; its
// media are Twilio's addresses, listed after the text.
func (a *Adapter) inbound(w http.ResponseWriter, r *http.Request, f url.Values) {
	from, to := f.Get("From"), f.Get("To")
	if from == "" || to == "" {
		httpcall.Problem(w, http.StatusBadRequest, "VALIDATION_ERROR", "The inbound message has no From or To.")
		return
	}
	body := f.Get("Body")
	for i := 0; ; i++ {
		u := f.Get("MediaUrl" + strconv.Itoa(i))
		if u == "" {
			break
		}
		body = strings.TrimSpace(body + "\n" + u)
	}
	in := provider.Inbound{From: phone.Address(from), To: phone.Address(to), Channel: domain.SMS,
		Body: body, At: a.Call.Now().UTC(), Ref: f.Get("MessageSid")}
	if err := a.Sink.Inbound(r.Context(), a.cfg.Name, in); err != nil {
		a.Call.NotStored(w, err)
		return
	}
	// An empty TwiML response: no automatic reply.
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Response></Response>`)
}

// ValidSignature checks an X-Twilio-Signature: the base64 HMAC-SHA1,
// keyed with the auth token, of the full URL followed by each parameter's
// name and value, sorted by name.
func ValidSignature(header, token, fullURL string, form url.Values) bool {
	got, err := base64.StdEncoding.DecodeString(header)
	if err != nil || header == "" {
		return false
	}
	return hmac.Equal(got, mac(token, fullURL, form))
}

// Sign is the X-Twilio-Signature Twilio sends for a callback to fullURL
// with form (for tests and tools).
func Sign(token, fullURL string, form url.Values) string {
	return base64.StdEncoding.EncodeToString(mac(token, fullURL, form))
}

func mac(token, fullURL string, form url.Values) []byte {
	h := hmac.New(sha1.New, []byte(token))
	_, _ = io.WriteString(h, fullURL)
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		vs := slices.Clone(form[k])
		slices.Sort(vs)
		for _, v := range vs {
			_, _ = io.WriteString(h, k+v)
		}
	}
	return h.Sum(nil)
}
