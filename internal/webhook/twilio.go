package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/twilio/signature"
)

// TwilioSecrets finds the auth token that signs a Twilio callback: the
// account SID's credential and the account it belongs to.
type TwilioSecrets interface {
	TwilioCredentialBySid(ctx context.Context, sid string) (domain.TwilioCredential, domain.Account, error)
}

// getMark starts the URL of a Twilio event whose receiver asked for GET
// (a number's SmsMethod): the event keeps the receiver's URL as it was set,
// so that a 410 stops, and an answer again hurries, every event of that
// receiver, and its parameters stay in the stored form, where retention
// redacts them.
const getMark = "GET "

// MethodURL is the URL a Twilio event is written with for a receiver at
// rawURL that asked for method (POST unless GET).
func MethodURL(method, rawURL string) string {
	if strings.EqualFold(method, http.MethodGet) {
		return getMark + rawURL
	}
	return rawURL
}

// splitMethod reads what MethodURL wrote.
func splitMethod(eventURL string) (method, rawURL string) {
	if u, ok := strings.CutPrefix(eventURL, getMark); ok {
		return http.MethodGet, u
	}
	return http.MethodPost, eventURL
}

// IsTwilio reports whether an event kind is one of the Twilio-compatible
// API's callbacks written as events of their own, whose body is Twilio's
// form parameters rather than msgsvc's JSON: a callback whose step or
// reply already has an event going to a msgsvc webhook, and the callbacks
// written before the events feed's rows carried them.
func IsTwilio(kind string) bool {
	return kind == domain.EventTwilioStatus || kind == domain.EventTwilioInbound
}

// TwilioForm is the encoded form of the Twilio callback an event is posted
// as, false when it is a msgsvc webhook: the form the event carries beside
// the feed's body, or the body of an event of its own.
func TwilioForm(ev domain.Event) (string, bool) {
	if ev.Form != "" {
		return ev.Form, true
	}
	if IsTwilio(ev.Event) {
		return ev.Body, true
	}
	return "", false
}

// twilioIdempotencyHeader carries the event's id, as Twilio names it.
const twilioIdempotencyHeader = "I-Twilio-Idempotency-Token"

// twilioRequest is the request of a Twilio event: its parameters (form,
// encoded as stored) posted as a form, or for GET added to the URL's
// query, signed with token.
func twilioRequest(ev domain.Event, encoded string, form url.Values, token string) Request {
	method, target := splitMethod(ev.URL)
	r := Request{Method: method, URL: target, Headers: []Header{{twilioIdempotencyHeader, ev.ID}, {}}}
	if method == http.MethodGet {
		if encoded != "" {
			sep := "?"
			if strings.Contains(target, "?") {
				sep = "&"
			}
			r.URL = target + sep + encoded
		}
		r.Headers[1] = Header{signature.Header, signature.Sign(token, r.URL, nil)}
		return r
	}
	r.ContentType, r.Body = "application/x-www-form-urlencoded", []byte(encoded)
	r.Headers[1] = Header{signature.Header, signature.Sign(token, target, form)}
	return r
}

type cachedToken struct {
	token   string
	fetched time.Time
	version int64
}

// twilioToken is the auth token of the account SID a Twilio event names in
// its AccountSid, when that SID is the event's account's in the event's
// environment: an event never signs with another account's token.
func (w *Worker) twilioToken(ctx context.Context, ev domain.Event, ac string) (string, error) {
	if w.cfg.Twilio == nil {
		return "", errors.New("no store of Twilio credentials")
	}
	version, err := w.version(ctx)
	if err != nil {
		return "", err
	}
	now := w.cfg.Now()
	key := ev.AccountID + "/" + string(ev.Env) + "/" + ac
	if v, ok := w.tokens.Load(key); ok {
		if c := v.(cachedToken); w.current(c.fetched, c.version, version, now) {
			return c.token, nil
		}
	}
	c, a, err := w.cfg.Twilio.TwilioCredentialBySid(ctx, ac)
	if err != nil {
		return "", fmt.Errorf("account SID %s: %w", ac, err)
	}
	if a.ID != ev.AccountID || c.AccountID != ev.AccountID || c.Env != ev.Env || c.Kind != domain.TwilioAccountSid {
		return "", fmt.Errorf("account SID %s is not the event's account's in %s", ac, ev.Env)
	}
	w.tokens.Store(key, cachedToken{token: c.Secret, fetched: now, version: version})
	return c.Secret, nil
}
