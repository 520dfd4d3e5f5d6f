package twilio

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/message"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
)

// world is an in-memory core behind a Handler: credentials, accounts,
// numbers, sends and messages, each counted where a test asks.
type world struct {
	t   *testing.T
	now time.Time

	mu       sync.Mutex
	creds    map[string]domain.TwilioCredential
	accounts map[string]domain.Account
	numbers  map[string]domain.TwilioNumber // account|phone
	messages []domain.Message               // oldest first
	lookups  int
	version  int64
	sends    []sent
	// refuse, when set, is what the next sends answer.
	refuse  error
	limited bool

	h *Handler
}

type sent struct {
	who domain.Principal
	req domain.SendRequest
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, now: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC), creds: map[string]domain.TwilioCredential{},
		accounts: map[string]domain.Account{}, numbers: map[string]domain.TwilioNumber{}, version: 1}
	w.h = New(Config{Credentials: w, Version: w.authVersion, Accounts: w, Numbers: w, Sender: w, Messages: w, Eraser: eraser{w},
		Redaction: domain.Redaction{Phone: func(p string) string {
			if strings.HasPrefix(p, "redacted:") {
				return p
			}
			return "redacted:" + strings.Repeat("ab", 16)
		}, EventBody: func(b string) (string, error) { return b, nil }},
		Limiter: w, Now: func() time.Time { return w.now }})
	return w
}

// account adds an account with an AC credential of env and an SK acting
// for it; it returns the AC and SK SIDs.
func (w *world) account(idv, acSid, skSid string, env domain.Environment, senders ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.accounts[idv] = domain.Account{ID: idv, Name: "Account " + idv, Currency: "EUR", Balance: 12_345_000,
		Senders: domain.Senders{domain.SMS: {Values: senders}}, CreatedAt: w.now.Add(-time.Hour)}
	w.creds[acSid] = domain.TwilioCredential{Sid: acSid, Kind: domain.TwilioAccountSid, AccountID: idv, Env: env, Secret: "token-" + acSid}
	if skSid != "" {
		w.creds[skSid] = domain.TwilioCredential{Sid: skSid, Kind: domain.TwilioAPIKey, AccountID: idv, Env: env, Secret: "secret-" + skSid, Parent: acSid}
	}
}

func (w *world) TwilioCredentialBySid(_ context.Context, s string) (domain.TwilioCredential, domain.Account, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lookups++
	c, ok := w.creds[s]
	if !ok {
		return c, domain.Account{}, domain.ErrNotFound
	}
	return c, w.accounts[c.AccountID], nil
}

func (w *world) authVersion(context.Context) (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.version, nil
}

func (w *world) Account(_ context.Context, idv string) (domain.Account, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	a, ok := w.accounts[idv]
	if !ok {
		return a, domain.ErrNotFound
	}
	return a, nil
}

func (w *world) TwilioNumbers(_ context.Context, accountID string) ([]domain.TwilioNumber, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []domain.TwilioNumber
	for _, n := range w.numbers {
		if n.AccountID == accountID {
			out = append(out, n)
		}
	}
	return out, nil
}

func (w *world) SetTwilioNumber(_ context.Context, n domain.TwilioNumber) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.numbers[n.AccountID+"|"+n.Phone] = n
	return nil
}

func (w *world) Send(_ context.Context, p domain.Principal, req domain.SendRequest, _ intake.SendOptions) (intake.Outcome, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sends = append(w.sends, sent{who: p, req: req})
	if w.refuse != nil {
		return intake.Outcome{}, w.refuse
	}
	w.now = w.now.Add(time.Millisecond)
	m := domain.Message{ID: id.New(id.Message, w.now), AccountID: p.Account.ID, Env: p.Env, To: strings.TrimPrefix(req.Recipients[0], "+"),
		From: req.Sender, Type: req.Channel, Channel: req.Channel, Body: req.Text, Status: domain.Sending, Segments: 1,
		Credits: 50_000, CreatedAt: w.now, UpdatedAt: w.now, ScheduledAt: req.Schedule}
	if p.Env.Live() {
		m.Charged = m.Credits
	}
	if req.Content.Media != nil {
		m.Content.Media = req.Content.Media
	}
	w.messages = append(w.messages, m)
	return intake.Outcome{Receipt: intake.Receipt{Messages: []intake.Planned{{Message: m}}}}, nil
}

func (w *world) find(sc message.Scope, idv string) (int, error) {
	for i, m := range w.messages {
		if m.ID == idv && m.AccountID == sc.AccountID && m.Env == sc.Env {
			return i, nil
		}
	}
	return 0, domain.ErrNotFound
}

func (w *world) Get(_ context.Context, sc message.Scope, idv string) (domain.Message, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i, err := w.find(sc, idv)
	if err != nil {
		return domain.Message{}, err
	}
	return w.messages[i], nil
}

func (w *world) List(_ context.Context, sc message.Scope, f message.ListFilter) (message.MessagePage, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var all []domain.Message
	for _, m := range slices.Backward(w.messages) {
		if m.AccountID == sc.AccountID && m.Env == sc.Env && (f.To == "" || m.To == f.To) &&
			(f.CreatedFrom.IsZero() || !m.CreatedAt.Before(f.CreatedFrom)) && (f.CreatedTo.IsZero() || m.CreatedAt.Before(f.CreatedTo)) {
			all = append(all, m)
		}
	}
	if f.After != "" {
		for i, m := range all {
			if m.ID == f.After {
				all = all[i+1:]
				break
			}
		}
	}
	p := message.MessagePage{Messages: all}
	if len(all) > f.Limit {
		p.Messages, p.Next = all[:f.Limit], all[f.Limit-1].ID
	}
	return p, nil
}

func (w *world) Cancel(_ context.Context, sc message.Scope, idv string) (domain.Message, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i, err := w.find(sc, idv)
	if err != nil {
		return domain.Message{}, err
	}
	if w.messages[i].Status != domain.Sending {
		return domain.Message{}, message.ErrNotCancelable
	}
	w.messages[i].Stamp(domain.Canceled, w.now)
	return w.messages[i], nil
}

func (w *world) Redact(_ context.Context, sc message.Scope, idv string) (domain.Message, error) {
	return w.erase(sc, idv, w.h.cfg.Redaction)
}

func (w *world) erase(sc message.Scope, idv string, r domain.Redaction) (domain.Message, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i, err := w.find(sc, idv)
	if err != nil {
		return domain.Message{}, err
	}
	m := &w.messages[i]
	m.Body, m.Content, m.To = "", domain.Content{}, r.Phone(m.To)
	return *m, nil
}

// eraser: the tracker redacts by id alone; the fake finds it anywhere.
type eraser struct{ w *world }

func (e eraser) Redact(_ context.Context, idv string, r domain.Redaction) (domain.Message, error) {
	e.w.mu.Lock()
	var sc message.Scope
	for _, m := range e.w.messages {
		if m.ID == idv {
			sc = message.Scope{AccountID: m.AccountID, Env: m.Env}
		}
	}
	e.w.mu.Unlock()
	return e.w.erase(sc, idv, r)
}

func (w *world) Allow(_ context.Context, r ratelimit.Request) (ratelimit.Decision, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.limited {
		return ratelimit.Decision{Allowed: false, RetryAfter: 1500 * time.Millisecond}, nil
	}
	return ratelimit.Decision{Allowed: true}, nil
}

// call makes a request as user:secret ("" user: none) and returns the
// status and the decoded body.
func (w *world) call(method, path, user, secret string, form url.Values) (int, map[string]any, http.Header) {
	w.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, path, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if user != "" {
		r.SetBasicAuth(user, secret)
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, r)
	out := map[string]any{}
	if rec.Body.Len() > 0 {
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			w.t.Fatalf("%s %s: body is not JSON: %v: %s", method, path, err, rec.Body.String())
		}
	}
	return rec.Code, out, rec.Header()
}

// code is a Twilio error's code (0 when the body is not an error).
func code(body map[string]any) int {
	c, _ := body["code"].(float64)
	return int(c)
}
