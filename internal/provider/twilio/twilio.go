// Package twilio is the Twilio Programmable Messaging adapter (REST API
// 2010-04-01): SMS and MMS through a number or a Messaging Service, the
// status callbacks and inbound messages Twilio posts to
// /providers/twilio/status and /providers/twilio/inbound, checked with
// X-Twilio-Signature.
package twilio

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
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

var _ provider.Adapter = (*Adapter)(nil)

// Type is Twilio as the provider registry knows it: configured by Config
// (a file's twilio block, or the MSGSVC_TWILIO_* variables), receiving
// Twilio's callbacks.
func Type() provider.Type {
	return provider.Define(provider.Spec[Config]{Name: TypeName, Channels: []domain.Channel{domain.SMS}, Env: fromEnv,
		New: build, Webhooks: provider.ReceiveAll(http.MethodPost, (*Adapter).Webhook, "status", "inbound"), OpenAPI: openAPI})
}

// fromEnv is the shortcut of one account without a file:
// MSGSVC_TWILIO_ACCOUNT_SID makes provider "twilio".
func fromEnv(getenv func(string) string) (Config, bool, error) {
	e := provider.NewEnv(getenv)
	sid := e.String("MSGSVC_TWILIO_ACCOUNT_SID")
	if sid == "" {
		return Config{}, false, nil
	}
	return Config{AccountSID: sid, AuthToken: e.String("MSGSVC_TWILIO_AUTH_TOKEN"), From: e.String("MSGSVC_TWILIO_FROM"),
		MessagingServiceSID: e.String("MSGSVC_TWILIO_MESSAGING_SERVICE_SID"), APIURL: e.String("MSGSVC_TWILIO_API_URL"),
		PublicURL: e.String("MSGSVC_PUBLIC_URL")}, true, e.Err()
}

func build(_ context.Context, name string, c Config, d provider.Deps) (provider.Adapter, error) {
	c.Name = name
	return New(c, d, httpcall.Deps{HTTP: d.HTTP, Now: d.Now, Log: d.Log})
}

// Adapter is a Twilio account as the service runs it. It is safe for
// concurrent use.
type Adapter struct {
	httpcall.Base
	cfg     Config
	sink    provider.Sink
	version string
}

// New checks cfg and makes an Adapter; hc may replace the clock, the HTTP
// client and the waits (tests).
func New(cfg Config, d provider.Deps, hc httpcall.Deps) (*Adapter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if d.Sink == nil {
		return nil, fmt.Errorf("twilio: no sink for statuses and replies")
	}
	cfg = cfg.withDefaults()
	a := &Adapter{cfg: cfg, sink: d.Sink, version: d.Version}
	a.Base = httpcall.NewBase(cfg.Name, httpcall.New(cfg.Settings("Twilio", cfg.Name), hc))
	return a, nil
}

// Submit sends each message and returns one result per message, in order:
// Twilio's message SID (SM…) as Ref, or the error.
func (a *Adapter) Submit(ctx context.Context, msgs []provider.Outbound) []provider.Result {
	return a.Call.Each(ctx, msgs, a.send)
}

func (a *Adapter) send(ctx context.Context, m provider.Outbound) provider.Result {
	form, perr := a.form(m)
	if perr != nil {
		return provider.Result{Err: perr}
	}
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Accept": {"application/json"},
		"User-Agent": {userAgent(a.version)}}
	req, err := http.NewRequest(http.MethodPost, "http://x", nil)
	if err != nil {
		return provider.Result{Err: &provider.Error{Code: domain.CodeProviderError, Message: err.Error()}}
	}
	req.SetBasicAuth(a.cfg.AccountSID, a.cfg.AuthToken)
	h.Set("Authorization", req.Header.Get("Authorization"))
	ans, perr := a.Call.Do(ctx, httpcall.Request{URL: a.cfg.APIURL + "/2010-04-01/Accounts/" + a.cfg.AccountSID + "/Messages.json",
		Header: h, Body: []byte(form.Encode())}, checkAnswer)
	if perr != nil {
		return provider.Result{Err: perr}
	}
	var msg struct {
		SID string `json:"sid"`
	}
	if err := json.Unmarshal(ans.Body, &msg); err != nil || msg.SID == "" {
		// Taken but unnamed: sending again could deliver it twice.
		return provider.Result{Err: &provider.Error{Code: domain.CodeProviderError,
			Message: "Twilio took the message but its answer names no sid: " + httpcall.Snippet(ans.Body)}}
	}
	return provider.Result{Ref: msg.SID}
}

// form is the Messages resource's create form for m.
func (a *Adapter) form(m provider.Outbound) (url.Values, *provider.Error) {
	f := url.Values{"To": {e164(m.To)}, "StatusCallback": {a.cfg.PublicURL + StatusPath}}
	switch {
	case m.From != "":
		f.Set("From", m.From)
	case a.cfg.From != "":
		f.Set("From", a.cfg.From)
	}
	if a.cfg.MessagingServiceSID != "" {
		f.Set("MessagingServiceSid", a.cfg.MessagingServiceSID)
	}
	if m.Body != "" {
		f.Set("Body", m.Body)
	}
	if md := m.Content.Media; md != nil {
		if md.URL == "" {
			return nil, &provider.Error{Code: domain.CodeMediaError, Message: noPublicMedia}
		}
		f.Set("MediaUrl", md.URL)
	}
	if f.Get("Body") == "" && f.Get("MediaUrl") == "" {
		return nil, &provider.Error{Code: domain.CodeRejected, Message: "nothing to send: no text and no media"}
	}
	return f, nil
}

// noPublicMedia explains the refusal of an uploaded file: Twilio fetches
// media from a public address, and msgsvc does not serve its uploads
// publicly.
const noPublicMedia = "Twilio fetches MMS media from a public URL and uploaded files (mediaId) have none: send the file by media.url"

// e164 puts the + that Twilio wants before a number given without it.
func e164(n string) string {
	if n == "" || strings.HasPrefix(n, "+") {
		return n
	}
	return "+" + n
}

func userAgent(version string) string {
	if version == "" {
		return "msgsvc"
	}
	return "msgsvc/" + version
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
	return refusal(e.Code, fmt.Sprintf("Twilio error %d (HTTP %d): %s", e.Code, a.Status, e.Message))
}
