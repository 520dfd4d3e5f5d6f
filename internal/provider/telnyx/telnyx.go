// Package telnyx is the Telnyx messaging adapter (API v2, POST
// /v2/messages): SMS and MMS from a number or a messaging profile, and the
// message.sent, message.finalized and message.received webhooks Telnyx
// posts to /providers/telnyx/webhook, checked with its Ed25519 signature.
package telnyx

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
)

// TypeName is the provider type of Telnyx in the configuration file.
const TypeName = "telnyx"

// WebhookPath is where Telnyx posts its webhooks, under the public URL.
const WebhookPath = "/providers/telnyx/webhook"

// Type is Telnyx as the provider registry knows it: configured by Config
// (a file's telnyx block, or the MSGSVC_TELNYX_* variables), receiving
// Telnyx's webhooks.
func Type() provider.Type {
	return httpcall.Kind[Config, *Config, *Adapter]{Name: TypeName, Shortcut: "MSGSVC_TELNYX_API_KEY", Env: func(v string, e *provider.Env) Config {
		return Config{APIKey: v, PublicKey: e.String("MSGSVC_TELNYX_PUBLIC_KEY"),
			MessagingProfileID: e.String("MSGSVC_TELNYX_MESSAGING_PROFILE_ID"), Account: httpcall.EnvAccount(e, "MSGSVC_TELNYX_")}
	}, New: New, Paths: []string{"webhook"}, OpenAPI: openAPI}.Type()
}

// Adapter is a Telnyx account as the service runs it. It is safe for
// concurrent use.
type Adapter struct {
	httpcall.Base
	cfg Config
	key ed25519.PublicKey
}

// New checks cfg and makes an Adapter; hc may replace the clock, the HTTP
// client and the waits (tests).
func New(cfg Config, d provider.Deps, hc httpcall.Deps) (*Adapter, error) {
	key, _ := publicKey(cfg.PublicKey)
	a := &Adapter{cfg: cfg.withDefaults(), key: key}
	return httpcall.Open(a, &a.Base, cfg.Validate(), "Telnyx", a.cfg.Account, d, hc, a.send, a.receive)
}

// request is the body of POST /v2/messages.
type request struct {
	From               string   `json:"from,omitempty"`
	MessagingProfileID string   `json:"messaging_profile_id,omitempty"`
	To                 string   `json:"to"`
	Text               string   `json:"text,omitempty"`
	MediaURLs          []string `json:"media_urls,omitempty"`
	Type               string   `json:"type"`
	WebhookURL         string   `json:"webhook_url,omitempty"`
}

func (a *Adapter) send(ctx context.Context, m provider.Outbound) provider.Result {
	body, perr := a.payload(m)
	if perr != nil {
		return provider.Result{Err: perr}
	}
	req := httpcall.Request{URL: a.cfg.APIURL + "/v2/messages", Header: a.Header(httpcall.JSON, "Bearer "+a.cfg.APIKey), Body: body}
	return a.Send(ctx, req, checkAnswer, "id", func(body []byte) []string {
		var resp struct {
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if json.Unmarshal(body, &resp) != nil || resp.Data.ID == "" {
			return nil
		}
		return []string{resp.Data.ID}
	})
}

func (a *Adapter) payload(m provider.Outbound) ([]byte, *provider.Error) {
	r := request{To: httpcall.E164(m.To), From: cmp.Or(m.From, a.cfg.From), Text: m.Body, Type: "SMS",
		MessagingProfileID: a.cfg.MessagingProfileID}
	if a.cfg.PublicURL != "" {
		r.WebhookURL = a.cfg.PublicURL + WebhookPath
	}
	media, perr := a.MediaURL(m)
	if perr != nil {
		return nil, perr
	}
	if media != "" {
		r.MediaURLs, r.Type = []string{media}, "MMS"
	}
	if r.Text == "" && media == "" {
		return nil, httpcall.Nothing()
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, &provider.Error{Code: domain.CodeProviderError, Message: err.Error()}
	}
	return b, nil
}

// apiError is one item of Telnyx's "errors".
type apiError struct {
	Code   string `json:"code"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
}

func (e apiError) text() string {
	s := "Telnyx error " + e.Code + ": " + e.Title
	if e.Detail != "" && e.Detail != e.Title {
		s += ": " + e.Detail
	}
	return s
}

// checkAnswer reads a 2xx (taken) or a 4xx: Telnyx's first error, its
// code mapped to ours.
func checkAnswer(a httpcall.Answer) *provider.Error {
	if a.Status/100 == 2 {
		return nil
	}
	var env struct {
		Errors []apiError `json:"errors"`
	}
	_ = json.Unmarshal(a.Body, &env)
	if len(env.Errors) == 0 {
		return codes.Refusal("Telnyx", "", fmt.Sprintf("Telnyx answered HTTP %d: %s", a.Status, httpcall.Snippet(a.Body)))
	}
	return codes.Refusal("Telnyx", env.Errors[0].Code, fmt.Sprintf("%s (HTTP %d)", env.Errors[0].text(), a.Status))
}
