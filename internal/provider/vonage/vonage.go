// Package vonage is the Vonage (formerly Nexmo) SMS API adapter: SMS over
// POST /sms/json, the delivery receipts and inbound SMS Vonage posts to
// /providers/vonage/status and /providers/vonage/inbound, checked with
// the account's signature secret (Vonage's signed webhooks). The SMS API
// has no MMS: a message with media is refused.
package vonage

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
)

// TypeName is the provider type of Vonage in the configuration file.
const TypeName = "vonage"

// The callback paths, under the public URL.
const (
	StatusPath  = "/providers/vonage/status"
	InboundPath = "/providers/vonage/inbound"
)

// Type is Vonage as the provider registry knows it: configured by Config
// (a file's vonage block, or the MSGSVC_VONAGE_* variables), receiving
// Vonage's webhooks.
func Type() provider.Type {
	return httpcall.Kind[Config, *Config, *Adapter]{Name: TypeName, Shortcut: "MSGSVC_VONAGE_API_KEY", Env: func(v string, e *provider.Env) Config {
		return Config{APIKey: v, APISecret: e.String("MSGSVC_VONAGE_API_SECRET"), SignatureSecret: e.String("MSGSVC_VONAGE_SIGNATURE_SECRET"),
			SignatureMethod: e.String("MSGSVC_VONAGE_SIGNATURE_METHOD"), Account: httpcall.EnvAccount(e, "MSGSVC_VONAGE_")}
	}, New: New, Paths: []string{"status", "inbound"}, OpenAPI: openAPI}.Type()
}

// Adapter is a Vonage account as the service runs it. It is safe for
// concurrent use.
type Adapter struct {
	httpcall.Base
	cfg Config
}

// New checks cfg and makes an Adapter; hc may replace the clock, the HTTP
// client and the waits (tests).
func New(cfg Config, d provider.Deps, hc httpcall.Deps) (*Adapter, error) {
	a := &Adapter{cfg: cfg.withDefaults()}
	return httpcall.Open(a, &a.Base, cfg.Validate(), "Vonage", a.cfg.Account, d, hc, a.send, a.receive)
}

// answer is the SMS API's answer: 200 even when a message was refused,
// with a status per part.
type answer struct {
	Messages []struct {
		Status    string `json:"status"`
		MessageID string `json:"message-id"`
		ErrorText string `json:"error-text"`
	} `json:"messages"`
}

func (a *Adapter) send(ctx context.Context, m provider.Outbound) provider.Result {
	form, perr := a.form(m)
	if perr != nil {
		return provider.Result{Err: perr}
	}
	// The credentials go in the form.
	req := httpcall.Request{URL: a.cfg.APIURL + "/sms/json", Header: a.Header(httpcall.Form, ""), Body: []byte(form.Encode())}
	return a.Send(ctx, req, checkAnswer, "message-id", func(body []byte) []string {
		var resp answer
		_ = json.Unmarshal(body, &resp) // checkAnswer read it already
		var parts []string
		for _, p := range resp.Messages {
			if p.Status == "0" && p.MessageID != "" {
				parts = append(parts, p.MessageID)
			}
		}
		return parts
	})
}

func (a *Adapter) form(m provider.Outbound) (url.Values, *provider.Error) {
	if m.Content.Media != nil {
		return nil, &provider.Error{Code: domain.CodeMediaError, Message: "Vonage's SMS API carries no media (MMS): send text only, or route MMS to Twilio or Telnyx"}
	}
	if m.Body == "" {
		return nil, &provider.Error{Code: domain.CodeRejected, Message: "nothing to send: no text"}
	}
	f := url.Values{"api_key": {a.cfg.APIKey}, "api_secret": {a.cfg.APISecret}, "from": {a.cfg.From},
		"to": {strings.TrimPrefix(m.To, "+")}, "text": {m.Body}, "type": {"text"}}
	if m.From != "" {
		f.Set("from", strings.TrimPrefix(m.From, "+"))
	}
	if !gsm(m.Body) {
		f.Set("type", "unicode")
	}
	if len(m.ID) <= 40 && m.ID != "" {
		f.Set("client-ref", m.ID)
	}
	if a.cfg.PublicURL != "" {
		f.Set("callback", a.cfg.PublicURL+StatusPath)
	}
	return f, nil
}

// checkAnswer reads an answer: a 200 whose first part's status is not
// "0" is a refusal; a 4xx is one too.
func checkAnswer(a httpcall.Answer) *provider.Error {
	if a.Status/100 != 2 {
		return &provider.Error{Code: domain.CodeRejected, Message: fmt.Sprintf("Vonage answered HTTP %d: %s", a.Status, httpcall.Snippet(a.Body))}
	}
	var resp answer
	if err := json.Unmarshal(a.Body, &resp); err != nil || len(resp.Messages) == 0 {
		return &provider.Error{Code: domain.CodeProviderError, Message: "Vonage answered unreadable JSON: " + httpcall.Snippet(a.Body)}
	}
	first := resp.Messages[0]
	if first.Status == "0" {
		return nil
	}
	return sendCodes.Refusal("Vonage", first.Status, fmt.Sprintf("Vonage status %s: %s", first.Status, first.ErrorText))
}
