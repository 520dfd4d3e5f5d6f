// Package twilio is the Twilio Programmable Messaging adapter (REST API
// 2010-04-01): SMS and MMS through a number or a Messaging Service, the
// status callbacks and inbound messages Twilio posts to
// /providers/twilio/status and /providers/twilio/inbound, checked with
// X-Twilio-Signature.
package twilio

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
)

// TypeName is the provider type of Twilio in the configuration file.
const TypeName = "twilio"

// The callback paths, under the public URL.
const (
	StatusPath  = "/providers/twilio/status"
	InboundPath = "/providers/twilio/inbound"
)

// Type is Twilio as the provider registry knows it: configured by Config
// (a file's twilio block, or the MSGSVC_TWILIO_* variables), receiving
// Twilio's callbacks.
func Type() provider.Type {
	return httpcall.Kind[Config, *Config, *Adapter]{Name: TypeName, Shortcut: "MSGSVC_TWILIO_ACCOUNT_SID", Env: func(v string, e *provider.Env) Config {
		return Config{AccountSID: v, AuthToken: e.String("MSGSVC_TWILIO_AUTH_TOKEN"),
			MessagingServiceSID: e.String("MSGSVC_TWILIO_MESSAGING_SERVICE_SID"), Account: httpcall.EnvAccount(e, "MSGSVC_TWILIO_")}
	}, New: New, Paths: []string{"status", "inbound"}, OpenAPI: openAPI}.Type()
}

// Adapter is a Twilio account as the service runs it. It is safe for
// concurrent use.
type Adapter struct {
	httpcall.Base
	cfg Config
}

// New checks cfg and makes an Adapter; hc may replace the clock, the HTTP
// client and the waits (tests).
func New(cfg Config, d provider.Deps, hc httpcall.Deps) (*Adapter, error) {
	a := &Adapter{cfg: cfg.withDefaults()}
	return httpcall.Open(a, &a.Base, cfg.Validate(), "Twilio", a.cfg.Account, d, hc, a.send, a.receive)
}

func (a *Adapter) send(ctx context.Context, m provider.Outbound) provider.Result {
	form, perr := a.form(m)
	if perr != nil {
		return provider.Result{Err: perr}
	}
	req := httpcall.Request{URL: a.cfg.APIURL + "/2010-04-01/Accounts/" + a.cfg.AccountSID + "/Messages.json",
		Header: a.Header(httpcall.Form, httpcall.BasicAuth(a.cfg.AccountSID, a.cfg.AuthToken)), Body: []byte(form.Encode())}
	return a.Send(ctx, req, checkAnswer, "sid", func(body []byte) []string {
		var msg struct {
			SID string `json:"sid"`
		}
		if json.Unmarshal(body, &msg) != nil || msg.SID == "" {
			return nil
		}
		return []string{msg.SID}
	})
}

// form is the Messages resource's create form for m.
func (a *Adapter) form(m provider.Outbound) (url.Values, *provider.Error) {
	f := url.Values{"To": {httpcall.E164(m.To)}, "StatusCallback": {a.cfg.PublicURL + StatusPath}}
	if from := cmp.Or(m.From, a.cfg.From); from != "" {
		f.Set("From", from)
	}
	if a.cfg.MessagingServiceSID != "" {
		f.Set("MessagingServiceSid", a.cfg.MessagingServiceSID)
	}
	if m.Body != "" {
		f.Set("Body", m.Body)
	}
	media, perr := a.MediaURL(m)
	if perr != nil {
		return nil, perr
	}
	if media != "" {
		f.Set("MediaUrl", media)
	}
	if m.Body == "" && media == "" {
		return nil, httpcall.Nothing()
	}
	return f, nil
}

// checkAnswer reads a 2xx (taken) or a 4xx: Twilio's error object, its
// code mapped to ours.
func checkAnswer(a httpcall.Answer) *provider.Error {
	if a.Status/100 == 2 {
		return nil
	}
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(a.Body, &e)
	if e.Message == "" {
		e.Message = httpcall.Snippet(a.Body)
	}
	return codes.Refusal("Twilio", e.Code, fmt.Sprintf("Twilio error %d (HTTP %d): %s", e.Code, a.Status, e.Message))
}
