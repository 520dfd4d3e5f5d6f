package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Fronts a run can send through.
const (
	FrontNative = "native"
	FrontTwilio = "twilio"
)

// checkFront refuses what the Twilio front cannot send: Messages.json
// takes one recipient per request, and this run sends SMS.
func (o Options) checkFront() error {
	switch o.Front {
	case "", FrontNative:
		return nil
	case FrontTwilio:
		if o.BatchSize != 1 {
			return errors.New("the twilio front sends one message per request (no --batch)")
		}
		if o.Type != "SMS" {
			return errors.New("the twilio front sends SMS only in the benchmark")
		}
		if o.Twilio.AccountSid == "" || o.Twilio.AuthToken == "" || o.Twilio.From == "" {
			return errors.New("the twilio front needs an account SID, its token and a From number")
		}
		return nil
	}
	return fmt.Errorf("unknown front %q (native or twilio)", o.Front)
}

// twilioForm is request i through the Twilio front: the form a Twilio SDK
// posts for one SMS, with a status callback unless the run goes without.
func (o Options) twilioForm(i int, callback string) url.Values {
	f := url.Values{"To": {"+" + number(i)}, "From": {o.Twilio.From}, "Body": {o.Text}}
	if callback != "" {
		f.Set("StatusCallback", callback)
	}
	return f
}

func postTwilio(ctx context.Context, c *http.Client, base string, login TwilioLogin, form url.Values) ([]string, error) {
	u := base + "/2010-04-01/Accounts/" + url.PathEscape(login.AccountSid) + "/Messages.json"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(login.AccountSid, login.AuthToken)
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return nil, fmt.Errorf("status %d: %.200s", resp.StatusCode, raw)
	}
	var out struct {
		Sid string `json:"sid"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Sid == "" {
		return nil, fmt.Errorf("no sid in %.200s (%v)", raw, err)
	}
	return []string{out.Sid}, nil
}

// twilioCallback reads a Twilio status callback as the receiver counts
// webhooks: the message by its SID, its status, and an identity for
// duplicates (Twilio's idempotency token when the post has one, else the
// message and status, which a post repeated would repeat).
func twilioCallback(body []byte, h http.Header) (payload, string) {
	f, _ := url.ParseQuery(string(body))
	p := payload{MessageID: f.Get("MessageSid"), Status: f.Get("MessageStatus")}
	wid := h.Get("I-Twilio-Idempotency-Token")
	if wid == "" {
		wid = p.MessageID + "/" + p.Status
	}
	return p, wid
}
