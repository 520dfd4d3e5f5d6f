package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

const base = "/api/v1/integration"

// Send sends a message or a batch. The answer comes before delivery:
// follow the messages with Message, the events feed or webhooks.
func (c *Client) Send(ctx context.Context, req SendRequest) (*SendResponse, error) {
	return c.send(ctx, req, false)
}

// DryRun validates and prices a send without sending or charging
// anything.
func (c *Client) DryRun(ctx context.Context, req SendRequest) (*SendResponse, error) {
	return c.send(ctx, req, true)
}

func (c *Client) send(ctx context.Context, req SendRequest, dry bool) (*SendResponse, error) {
	body, err := jsonBody(req)
	if err != nil {
		return nil, err
	}
	r := request{method: http.MethodPost, path: base + "/messages", body: body, idempotencyKey: req.IdempotencyKey}
	if dry {
		r.query = url.Values{"dryRun": {"true"}}
	}
	var h http.Header
	r.header = &h
	var out SendResponse
	if err := c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	out.Replayed = h.Get("Idempotent-Replayed") == "true"
	return &out, nil
}

// Message reads one message with its status history.
func (c *Client) Message(ctx context.Context, messageID string) (*Message, error) {
	var out Message
	return &out, c.do(ctx, request{method: http.MethodGet, path: base + "/messages/" + url.PathEscape(messageID)}, &out)
}

// CancelMessage cancels a message not yet handed to a provider; else the
// error has the code MESSAGE_NOT_CANCELABLE.
func (c *Client) CancelMessage(ctx context.Context, messageID string) (*Message, error) {
	var out Message
	return &out, c.do(ctx, request{method: http.MethodPost, path: base + "/messages/" + url.PathEscape(messageID) + "/cancel"}, &out)
}

// ListMessages reads one page of the message list, newest first.
func (c *Client) ListMessages(ctx context.Context, o ListOptions) (*MessagePage, error) {
	q := url.Values{}
	for k, v := range map[string]string{"status": o.Status, "to": o.To, "campaignId": o.CampaignID, "reference": o.Reference,
		"cursor": o.Cursor} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if !o.CreatedFrom.IsZero() {
		q.Set("createdFrom", o.CreatedFrom.UTC().Format(time.RFC3339Nano))
	}
	if !o.CreatedTo.IsZero() {
		q.Set("createdTo", o.CreatedTo.UTC().Format(time.RFC3339Nano))
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	var out MessagePage
	return &out, c.do(ctx, request{method: http.MethodGet, path: base + "/messages", query: q}, &out)
}

// Campaign reads a campaign with its counts and one page of its messages
// (limit 0: the server's default; cursor "": the first page).
func (c *Client) Campaign(ctx context.Context, campaignID string, limit int, cursor string) (*Campaign, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var out Campaign
	return &out, c.do(ctx, request{method: http.MethodGet, path: base + "/campaigns/" + url.PathEscape(campaignID), query: q}, &out)
}

// CancelCampaign cancels every message of a campaign that can still be
// canceled.
func (c *Client) CancelCampaign(ctx context.Context, campaignID string) (*CampaignCancel, error) {
	var out CampaignCancel
	return &out, c.do(ctx, request{method: http.MethodPost, path: base + "/campaigns/" + url.PathEscape(campaignID) + "/cancel"}, &out)
}

// EventsPage reads the events after a cursor ("" for the oldest kept),
// at most limit (0: the server's default).
func (c *Client) EventsPage(ctx context.Context, after string, limit int) (*EventPage, error) {
	q := url.Values{}
	if after != "" {
		q.Set("after", after)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out EventPage
	return &out, c.do(ctx, request{method: http.MethodGet, path: base + "/events", query: q}, &out)
}

// Balance reads the account's credit balance.
func (c *Client) Balance(ctx context.Context) (*Balance, error) {
	var out Balance
	return &out, c.do(ctx, request{method: http.MethodGet, path: base + "/balance"}, &out)
}

// Limits reads the account's tier and rate-limit windows.
func (c *Client) Limits(ctx context.Context) (*Limits, error) {
	var out Limits
	return &out, c.do(ctx, request{method: http.MethodGet, path: base + "/limits"}, &out)
}

// Usage reads what the key's environment sent and was charged, refunds
// deducted, per UTC day (or month), channel and calling code. Zero fields
// of q take the server's defaults: the 30 days up to today, by day, every
// channel.
func (c *Client) Usage(ctx context.Context, q UsageQuery) (*Usage, error) {
	v := url.Values{}
	for k, s := range map[string]string{"from": q.From, "to": q.To, "groupBy": q.GroupBy, "channel": q.Channel} {
		if s != "" {
			v.Set(k, s)
		}
	}
	var out Usage
	return &out, c.do(ctx, request{method: http.MethodGet, path: base + "/usage", query: v}, &out)
}

// Templates lists the account's WhatsApp templates.
func (c *Client) Templates(ctx context.Context) ([]Template, error) {
	var out struct {
		Templates []Template `json:"templates"`
	}
	return out.Templates, c.do(ctx, request{method: http.MethodGet, path: base + "/templates"}, &out)
}

// UploadMedia uploads a file (at most 10 MB) for WhatsApp and RCS sends.
// The server reads its type from the content; name is informative.
func (c *Client) UploadMedia(ctx context.Context, name string, r io.Reader) (*Media, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	part, err := mw.CreateFormFile("file", name)
	if err != nil {
		return nil, fmt.Errorf("msgsvc: upload: %w", err)
	}
	// Read at most one byte over the limit, so that the server, not a
	// huge read here, refuses an oversized file.
	if _, err := io.Copy(part, io.LimitReader(r, 10<<20+1)); err != nil {
		return nil, fmt.Errorf("msgsvc: upload: read %s: %w", name, err)
	}
	if err := mw.Close(); err != nil {
		return nil, fmt.Errorf("msgsvc: upload: %w", err)
	}
	var out Media
	return &out, c.do(ctx, request{method: http.MethodPost, path: base + "/media", body: buf.Bytes(),
		contentType: mw.FormDataContentType()}, &out)
}

// InjectTestReply simulates a recipient's reply (test keys only).
func (c *Client) InjectTestReply(ctx context.Context, reply TestReply) (*TestReplyResult, error) {
	body, err := jsonBody(reply)
	if err != nil {
		return nil, err
	}
	var out TestReplyResult
	return &out, c.do(ctx, request{method: http.MethodPost, path: base + "/test/replies", body: body}, &out)
}

// OptOut is a number that opted out of the account's messages by replying
// a stop word (docs/compliance.md).
type OptOut struct {
	Phone     string    `json:"phone"`
	Channel   string    `json:"channel"`
	CreatedAt time.Time `json:"createdAt"`
}

// OptOutPage is one page of the opt-out list.
type OptOutPage struct {
	OptOuts    []OptOut `json:"optOuts"`
	NextCursor string   `json:"nextCursor"`
}

// ListOptOuts reads one page of the numbers that opted out (cursor "":
// the first page).
func (c *Client) ListOptOuts(ctx context.Context, cursor string) (*OptOutPage, error) {
	q := url.Values{}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var out OptOutPage
	return &out, c.do(ctx, request{method: http.MethodGet, path: base + "/opt-outs", query: q}, &out)
}

// RedactMessage erases a message's text and keeps its number only as a
// keyed hash, at once (docs/compliance.md), and returns the message as it
// is now. A message being handed to a provider at that moment answers
// MESSAGE_NOT_CANCELABLE: try again a few seconds later.
func (c *Client) RedactMessage(ctx context.Context, messageID string) (*Message, error) {
	var out Message
	return &out, c.do(ctx, request{method: http.MethodPost, path: base + "/messages/" + url.PathEscape(messageID) + "/redact"}, &out)
}
