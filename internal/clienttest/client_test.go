package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/client"
	"github.com/msgsvc/msgsvc/internal/api/openapi"
	"github.com/msgsvc/msgsvc/internal/media/mediatest"
	"github.com/msgsvc/msgsvc/internal/provider/builtin"
)

func newClient(t *testing.T, opts ...client.Option) *client.Client {
	t.Helper()
	return client.New(os.Getenv("MSGSVC_URL"), os.Getenv("MSGSVC_API_KEY"), append([]client.Option{client.WithBackoff(time.Millisecond)}, opts...)...)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// unique makes a reference no other test or run uses.
func unique(prefix string) string { return prefix + "-" + client.NewIdempotencyKey()[:12] }

// proxy stands between the client and the node; misbehave decides, per
// request, whether to answer in the node's place (true) after optionally
// forwarding it.
type proxy struct {
	srv      *httptest.Server
	mu       sync.Mutex
	requests []*http.Request
	keys     []string
}

func newProxy(t *testing.T, misbehave func(n int, w http.ResponseWriter, r *http.Request, forward func()) bool) *proxy {
	target, _ := url.Parse(os.Getenv("MSGSVC_URL"))
	rp := httputil.NewSingleHostReverseProxy(target)
	p := &proxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.requests = append(p.requests, r)
		p.keys = append(p.keys, r.Header.Get("Idempotency-Key"))
		n := len(p.requests)
		p.mu.Unlock()
		// forward sends the request to the node and throws its answer
		// away, as a connection lost on the way back would.
		forward := func() { rp.ServeHTTP(httptest.NewRecorder(), r.Clone(r.Context())) }
		if misbehave(n, w, r, forward) {
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *proxy) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.keys)
}

// A send whose answer is lost is tried again with the same key: the node
// replays its answer, and one message exists.
func TestSendRetriesWithTheSameKey(t *testing.T) {
	p := newProxy(t, func(n int, w http.ResponseWriter, r *http.Request, forward func()) bool {
		if n == 1 {
			forward()
			w.WriteHeader(http.StatusBadGateway)
			return true
		}
		return false
	})
	c := client.New(p.srv.URL, os.Getenv("MSGSVC_API_KEY"), client.WithBackoff(time.Millisecond))
	ref := unique("retry")
	out, err := c.Send(ctx(t), client.SendRequest{To: "5511999990000", Message: "once", Type: client.SMS, Reference: ref})
	if err != nil {
		t.Fatal(err)
	}
	keys := p.seen()
	if len(keys) != 2 || keys[0] == "" || keys[0] != keys[1] {
		t.Fatalf("Idempotency-Keys sent %q, want the same key twice", keys)
	}
	if !out.Replayed {
		t.Error("the retried send's answer is not marked as replayed")
	}
	page, err := newClient(t).ListMessages(ctx(t), client.ListOptions{Reference: ref})
	if err != nil || len(page.Messages) != 1 || page.Messages[0].MessageID != out.Messages[0].MessageID {
		t.Fatalf("messages with the reference: %+v (%v), want exactly the one answered", page, err)
	}
}

// 429 RATE_LIMITED is tried again after Retry-After; a 429 without it
// (DAILY_LIMIT_REACHED) and other refusals are not.
func TestWhatIsRetried(t *testing.T) {
	cases := []struct {
		name     string
		status   int
		header   string
		attempts int
		code     string
	}{
		{"rate limited", http.StatusTooManyRequests, "1", 2, ""},
		{"daily limit", http.StatusTooManyRequests, "", 1, client.CodeDailyLimitReached},
		{"unavailable", http.StatusServiceUnavailable, "", 2, ""},
		{"validation", http.StatusBadRequest, "", 1, client.CodeValidation},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProxy(t, func(n int, w http.ResponseWriter, r *http.Request, _ func()) bool {
				if n > 1 {
					return false
				}
				if tc.header != "" {
					w.Header().Set("Retry-After", tc.header)
				}
				code := tc.code
				if code == "" {
					code = "RATE_LIMITED"
				}
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(tc.status)
				fmt.Fprintf(w, `{"type":"about:blank","status":%d,"code":%q,"detail":"test"}`, tc.status, code)
				return true
			})
			c := client.New(p.srv.URL, os.Getenv("MSGSVC_API_KEY"), client.WithBackoff(time.Millisecond))
			_, err := c.Balance(ctx(t))
			if got := len(p.seen()); got != tc.attempts {
				t.Errorf("%d attempts, want %d", got, tc.attempts)
			}
			if tc.attempts == 1 && !client.HasCode(err, tc.code) {
				t.Errorf("error %v, want code %s", err, tc.code)
			}
			if tc.attempts == 2 && err != nil {
				t.Errorf("the retry failed: %v", err)
			}
		})
	}
	// Retries off: one attempt.
	p := newProxy(t, func(n int, w http.ResponseWriter, r *http.Request, _ func()) bool {
		w.WriteHeader(http.StatusBadGateway)
		return true
	})
	_, err := client.New(p.srv.URL, "k", client.WithRetries(0)).Balance(ctx(t))
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadGateway || len(p.seen()) != 1 {
		t.Errorf("without retries: %v after %d attempts", err, len(p.seen()))
	}
}

// Every error of the API arrives as an *Error with its code, fields and
// request id.
func TestErrorsCarryTheProblem(t *testing.T) {
	c := newClient(t)
	_, err := c.Message(ctx(t), "msg_nothing")
	var e *client.Error
	if !errors.As(err, &e) || e.StatusCode != 404 || e.Code != client.CodeNotFound || !strings.HasPrefix(e.RequestID, "req_") {
		t.Errorf("unknown message: %#v", err)
	}
	_, err = client.New(os.Getenv("MSGSVC_URL"), "svc_test_"+strings.Repeat("x", 40)).Balance(ctx(t))
	if !client.HasCode(err, client.CodeInvalidAPIKey) {
		t.Errorf("wrong key: %v", err)
	}
	_, err = c.Send(ctx(t), client.SendRequest{To: "12", Type: client.SMS})
	if !errors.As(err, &e) || e.Code != client.CodeValidation || len(e.Fields) < 2 || !strings.Contains(e.Error(), "to ") {
		t.Errorf("invalid send: %v", err)
	}
}

// One walk over every operation against the node: the typed answers
// decode and hold what was asked for.
func TestEveryOperation(t *testing.T) {
	c, cx := newClient(t), ctx(t)
	if b, err := c.Balance(cx); err != nil || b.Currency != "USD" || b.LastUpdated.IsZero() {
		t.Errorf("balance %+v %v", b, err)
	}
	if l, err := c.Limits(cx); err != nil || l.Tier != "enterprise" || l.Limits.Status.Reset.IsZero() {
		t.Errorf("limits %+v %v", l, err)
	}
	if ts, err := c.Templates(cx); err != nil || ts == nil {
		t.Errorf("templates %+v %v", ts, err)
	}
	m, err := c.UploadMedia(cx, "logo.png", bytes.NewReader(mediatest.PNG()))
	if err != nil || m.MimeType != "image/png" || !strings.HasPrefix(m.MediaID, "med_") {
		t.Errorf("upload %+v %v", m, err)
	}
	dry, err := c.DryRun(cx, client.SendRequest{To: "5511999990000", Message: "hi", Type: client.SMS})
	if err != nil || !dry.DryRun || dry.CampaignID != "" || dry.Messages[0].Segments != 1 {
		t.Errorf("dry run %+v %v", dry, err)
	}
	later := time.Now().Add(time.Hour).UTC()
	s, err := c.Send(cx, client.SendRequest{Recipients: []string{"5511999990010", "5511999990011"}, Message: "later",
		Type: client.SMS, ScheduledAt: &later})
	if err != nil || len(s.Messages) != 2 || s.Replayed {
		t.Fatalf("send %+v %v", s, err)
	}
	one, err := c.CancelMessage(cx, s.Messages[0].MessageID)
	if err != nil || one.Status != client.StatusCanceled || len(one.History) != 2 || one.ScheduledAt.IsZero() {
		t.Errorf("cancel message %+v %v", one, err)
	}
	if _, err := c.CancelMessage(cx, s.Messages[0].MessageID); !client.HasCode(err, client.CodeMessageNotCancelable) {
		t.Errorf("cancel twice: %v", err)
	}
	camp, err := c.Campaign(cx, s.CampaignID, 1, "")
	if err != nil || camp.Total != 2 || len(camp.Messages) != 1 || camp.NextCursor == "" || camp.Counts[client.StatusCanceled] != 1 {
		t.Errorf("campaign %+v %v", camp, err)
	}
	var ids []string
	for m, err := range c.CampaignMessages(cx, s.CampaignID) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.MessageID)
	}
	if len(ids) != 2 {
		t.Errorf("campaign messages %v", ids)
	}
	cc, err := c.CancelCampaign(cx, s.CampaignID)
	if err != nil || cc.Canceled != 1 {
		t.Errorf("cancel campaign %+v %v", cc, err)
	}
	r, err := c.InjectTestReply(cx, client.TestReply{From: "5511999990010", Message: "hello"})
	if err != nil || !r.Accepted || r.CampaignID != s.CampaignID {
		t.Errorf("test reply %+v %v", r, err)
	}
	page, err := c.ListMessages(cx, client.ListOptions{CampaignID: s.CampaignID, Status: client.StatusCanceled,
		CreatedFrom: time.Now().Add(-time.Hour), CreatedTo: time.Now().Add(time.Hour)})
	if err != nil || len(page.Messages) != 2 || page.Messages[0].History != nil {
		t.Errorf("list %+v %v", page, err)
	}
	ev, err := c.EventsPage(cx, "", 1)
	if err != nil || len(ev.Events) != 1 || ev.NextCursor == "" {
		t.Errorf("events page %+v %v", ev, err)
	}
}

// The compliance operations of docs/compliance.md: the opt-out list and
// redaction.
func TestComplianceOperations(t *testing.T) {
	c, cx := newClient(t), ctx(t)
	if _, err := c.ListOptOuts(cx, ""); err != nil {
		t.Fatalf("opt-outs: %v", err)
	}
	s, err := c.Send(cx, client.SendRequest{To: "5511999990000", Message: "to redact", Type: client.SMS})
	if err != nil {
		t.Fatal(err)
	}
	// The message may be in a provider's hands for a moment, which answers
	// 409 MESSAGE_NOT_CANCELABLE: asked again, as the API says, until a deadline.
	var m *client.Message
	for deadline := time.Now().Add(10 * time.Second); ; {
		m, err = c.RedactMessage(cx, s.Messages[0].MessageID)
		if !client.HasCode(err, client.CodeMessageNotCancelable) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("redact: %v", err)
	}
	if !m.Redacted || !strings.HasPrefix(m.To, "redacted:") {
		t.Errorf("redacted message: redacted %v, to %q", m.Redacted, m.To)
	}
}

// The usage report: the key's environment's messages per period, channel
// and calling code; a bad parameter is a validation error naming it.
func TestUsage(t *testing.T) {
	c, cx := newClient(t), ctx(t)
	if _, err := c.Send(cx, client.SendRequest{To: "5511999990000", Message: "counted", Type: client.SMS}); err != nil {
		t.Fatal(err)
	}
	u, err := c.Usage(cx, client.UsageQuery{GroupBy: "month", Channel: "sms"})
	if err != nil || u.Currency == "" {
		t.Fatalf("usage: %+v %v", u, err)
	}
	var home int64
	for _, r := range u.Usage {
		if r.Channel != "SMS" || len(r.Period) != len("2026-11") {
			t.Errorf("row %+v", r)
		}
		if r.Country == "55" {
			home += r.Messages
		}
	}
	if home < 1 {
		t.Errorf("no SMS to +55 counted: %+v", u.Usage)
	}
	var apiErr *client.Error
	if _, err := c.Usage(cx, client.UsageQuery{GroupBy: "week"}); !errors.As(err, &apiErr) || apiErr.Code != client.CodeValidation ||
		len(apiErr.Fields) != 1 || apiErr.Fields[0].Field != "groupBy" {
		t.Fatalf("a bad groupBy: %v", err)
	}
}

// The client has a method for every operation of the integration API.
func TestClientCoversTheAPI(t *testing.T) {
	methods := map[string]string{
		"getBalance": "Balance", "getAccountBalance": "Balance", "sendMessage": "Send, DryRun", "listMessages": "ListMessages, Messages",
		"getMessage": "Message", "cancelMessage": "CancelMessage", "getCampaign": "Campaign, CampaignMessages",
		"cancelCampaign": "CancelCampaign", "uploadMedia": "UploadMedia", "listTemplates": "Templates", "getLimits": "Limits",
		"injectTestReply": "InjectTestReply", "listEvents": "EventsPage, Feed", "listOptOuts": "ListOptOuts, OptOuts",
		"redactMessage": "RedactMessage", "getUsage": "Usage",
	}
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openapi.Spec(builtin.Types()), &doc); err != nil {
		t.Fatal(err)
	}
	for path, ops := range doc.Paths {
		if !strings.HasPrefix(path, "/api/v1/integration/") && !strings.HasPrefix(path, "/v1/account/") {
			continue
		}
		for method, op := range ops {
			if _, ok := methods[op.OperationID]; !ok {
				t.Errorf("%s %s (%s) has no method in package client", strings.ToUpper(method), path, op.OperationID)
			}
		}
	}
}

// Iterating pages gives the same messages as one big page, and a feed
// started from a stored cursor gives only what came after it.
func TestIterators(t *testing.T) {
	c, cx := newClient(t), ctx(t)
	ref := unique("iter")
	for i := range 5 {
		if _, err := c.Send(cx, client.SendRequest{To: fmt.Sprintf("55119999902%02d", i), Message: "x", Type: client.SMS, Reference: ref}); err != nil {
			t.Fatal(err)
		}
	}
	var paged []string
	for m, err := range c.Messages(cx, client.ListOptions{Reference: ref, Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, m.MessageID)
	}
	all, err := c.ListMessages(cx, client.ListOptions{Reference: ref, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var whole []string
	for _, m := range all.Messages {
		whole = append(whole, m.MessageID)
	}
	if len(paged) != 5 || !slices.Equal(paged, whole) {
		t.Errorf("pages of 2 gave %v, one page %v", paged, whole)
	}

	feed := c.Feed("")
	feed.PageSize = 7
	for _, err := range feed.Events(cx) {
		if err != nil {
			t.Fatal(err)
		}
	}
	stored := feed.Cursor()
	r, err := c.InjectTestReply(cx, client.TestReply{From: "5511977776666", Message: unique("after")})
	if err != nil || r.CampaignID != "" {
		t.Fatalf("reply %+v %v", r, err)
	}
	var after []client.Event
	for ev, err := range c.Feed(stored).Events(cx) {
		if err != nil {
			t.Fatal(err)
		}
		after = append(after, ev)
	}
	// Status events of the sends above may still be arriving; the reply
	// must be among what came after the cursor, and nothing before it.
	found := false
	for _, ev := range after {
		if ev.Type == client.EventMessageReceived {
			rec, err := ev.MessageReceived()
			found = found || (err == nil && rec.Phone == "5511977776666" && rec.CampaignID == "")
		}
		if _, err := ev.DeliveryStatus(); ev.Type == client.EventDeliveryStatus && err != nil {
			t.Errorf("event %s: %v", ev.ID, err)
		}
	}
	if !found {
		t.Errorf("the reply written after the stored cursor is not in %d events read from it", len(after))
	}
}

// An Event decodes only as its own type.
func TestEventDecoding(t *testing.T) {
	ev := client.Event{ID: "evt_1", Type: client.EventMessageReceived, Data: json.RawMessage(`{"event":"message_received","campaignId":null,"phone":"5511","message":"hi","receivedAt":"2030-01-01T00:00:00.000Z","channel":"SMS"}`)}
	if _, err := ev.DeliveryStatus(); err == nil {
		t.Error("a reply decoded as a delivery status")
	}
	m, err := ev.MessageReceived()
	if err != nil || m.CampaignID != "" || m.Message != "hi" || m.ReceivedAt.Year() != 2030 {
		t.Errorf("reply %+v %v", m, err)
	}
}
