package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/apikey"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/message"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
)

// The harness runs the Server over in-memory fakes of the interfaces it
// takes, with the real in-memory rate limiter on a clock the test moves.
// These tests are about the wire (decoding, problem+json, auth, headers,
// paging, replays), which the Server decides alone: fakes keep them fast
// and independent of how storage and the send engine are built, which
// internal/app's acceptance tests exercise whole on SQLite and PostgreSQL.

// testClock stands still until a test moves it: rate-limit windows and
// Retry-After are then exact.
type testClock struct{ unixNano atomic.Int64 }

func (c *testClock) Now() time.Time          { return time.Unix(0, c.unixNano.Load()).UTC() }
func (c *testClock) Advance(d time.Duration) { c.unixNano.Add(int64(d)) }

// placeAt moves the clock to offset past the start of the next minute and
// returns that minute's end, where its windows reset.
func (c *testClock) placeAt(offset time.Duration) time.Time {
	start := c.Now().Truncate(time.Minute).Add(time.Minute)
	c.Advance(start.Add(offset).Sub(c.Now()))
	return start.Add(time.Minute)
}

// fakeStore is the storage the Server reads directly: keys and accounts,
// remembered answers, usage and a ping.
type fakeStore struct {
	mu       sync.Mutex
	keys     map[string]domain.APIKey // by hash
	accounts map[string]domain.Account
	idem     map[[2]string]domain.Idempotency
	usage    []domain.UsageDelta
	pingErr  error
}

func (f *fakeStore) KeyByHash(_ context.Context, hash string) (domain.APIKey, domain.Account, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k, ok := f.keys[hash]
	if !ok {
		return domain.APIKey{}, domain.Account{}, domain.ErrNotFound
	}
	return k, f.accounts[k.AccountID], nil
}

func (f *fakeStore) TouchKey(context.Context, string, time.Time) error { return nil }

func (f *fakeStore) Account(_ context.Context, id string) (domain.Account, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.accounts[id]
	if !ok {
		return a, domain.ErrNotFound
	}
	return a, nil
}

func (f *fakeStore) Idempotency(_ context.Context, keyID, key string) (domain.Idempotency, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.idem[[2]string{keyID, key}]
	if !ok {
		return in, domain.ErrNotFound
	}
	return in, nil
}

func (f *fakeStore) SaveIdempotency(_ context.Context, in domain.Idempotency) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.idem[[2]string{in.KeyID, in.Key}] = in
	return nil
}

func (f *fakeStore) UsageByDay(context.Context, domain.UsageQuery) ([]domain.UsageDelta, error) {
	return f.usage, nil
}

func (f *fakeStore) Ping(context.Context) error { return f.pingErr }

// update changes an account as storage would (the next request sees it).
func (f *fakeStore) update(id string, change func(a *domain.Account)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.accounts[id]
	change(&a)
	f.accounts[id] = a
}

// revoke revokes every key of an environment of an account.
func (f *fakeStore) revoke(accountID string, env domain.Environment, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for h, k := range f.keys {
		if k.AccountID == accountID && k.Env == env {
			k.RevokedAt = at
			f.keys[h] = k
		}
	}
}

// fakeMessages is the message service. A send is accepted as one message
// (or refused with refuseNext) and kept by Idempotency-Key the way the
// engine keeps it; the reads know the messages and campaigns put in them,
// each in its own scope.
type fakeMessages struct {
	mu         sync.Mutex
	sends      int
	refuseNext error
	idem       map[[2]string]domain.Idempotency
	messages   map[string]fakeScoped[domain.Message]
	campaigns  map[string]fakeScoped[message.CampaignPage]
	listed     int
	filter     message.ListFilter
	next       string
}

type fakeScoped[T any] struct {
	scope message.Scope
	v     T
}

func (f *fakeMessages) Send(_ context.Context, p domain.Principal, _ domain.SendRequest, opt intake.SendOptions) (intake.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.refuseNext; err != nil {
		f.refuseNext = nil
		return intake.Outcome{}, err
	}
	var key [2]string
	if opt.Idempotency != nil {
		key = [2]string{p.CredentialID, opt.Idempotency.Key}
		if prev, ok := f.idem[key]; ok {
			if prev.RequestHash != opt.Idempotency.RequestHash {
				return intake.Outcome{}, domain.ErrIdempotencyConflict
			}
			return intake.Outcome{Replay: &prev}, nil
		}
	}
	f.sends++
	m := domain.Message{ID: fmt.Sprintf("msg_%026d", f.sends), Status: domain.Sending, Segments: 1, Credits: 1_000000}
	rc := intake.Receipt{DryRun: opt.DryRun, Credits: m.Credits, Messages: []intake.Planned{{Message: m}},
		Campaign: domain.Campaign{ID: fmt.Sprintf("cmp_%026d", f.sends)}}
	if opt.Idempotency != nil {
		status, body, err := opt.Idempotency.Response(rc)
		if err != nil {
			return intake.Outcome{}, err
		}
		f.idem[key] = domain.Idempotency{KeyID: p.CredentialID, Key: opt.Idempotency.Key, RequestHash: opt.Idempotency.RequestHash,
			StatusCode: status, Response: body}
	}
	return intake.Outcome{Receipt: rc}, nil
}

func (f *fakeMessages) sent() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sends
}

func (f *fakeMessages) refuse(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refuseNext = err
}

func (f *fakeMessages) Get(_ context.Context, sc message.Scope, id string) (domain.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, ok := f.messages[id]; ok && m.scope == sc {
		return m.v, nil
	}
	return domain.Message{}, domain.ErrNotFound
}

// List answers an empty page whose next cursor is next, and keeps the
// filter it was asked for.
func (f *fakeMessages) List(_ context.Context, _ message.Scope, lf message.ListFilter) (message.MessagePage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listed++
	f.filter = lf
	return message.MessagePage{Next: f.next}, nil
}

func (f *fakeMessages) Events(context.Context, message.Scope, int64, int) (message.EventPage, error) {
	return message.EventPage{}, nil
}

// Campaign pages through the campaign's messages after the cursor (a
// message id), limit at a time.
func (f *fakeMessages) Campaign(_ context.Context, sc message.Scope, id, after string, limit int) (message.CampaignPage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.campaigns[id]
	if !ok || c.scope != sc {
		return message.CampaignPage{}, domain.ErrNotFound
	}
	p, rest := c.v, c.v.Messages
	for after != "" && len(rest) > 0 && rest[0].ID <= after {
		rest = rest[1:]
	}
	p.Messages, p.Next = rest, ""
	if len(rest) > limit {
		p.Messages, p.Next = rest[:limit], rest[limit-1].ID
	}
	return p, nil
}

func (f *fakeMessages) Cancel(ctx context.Context, sc message.Scope, id string) (domain.Message, error) {
	m, err := f.Get(ctx, sc, id)
	if err != nil {
		return m, err
	}
	if m.Status != domain.Sending {
		return m, message.ErrNotCancelable
	}
	m.Status = domain.Canceled
	f.put(sc, m)
	return m, nil
}

func (f *fakeMessages) CancelCampaign(_ context.Context, sc message.Scope, id string) ([]domain.Message, error) {
	return nil, domain.ErrNotFound
}

func (f *fakeMessages) Redact(ctx context.Context, sc message.Scope, id string) (domain.Message, error) {
	return f.Get(ctx, sc, id)
}

// put files a message under a scope for the reads.
func (f *fakeMessages) put(sc message.Scope, m domain.Message) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.messages[m.ID] = fakeScoped[domain.Message]{sc, m}
}

// fakeReplies records the test replies it is handed.
type fakeReplies struct {
	mu  sync.Mutex
	got int
}

func (f *fakeReplies) Receive(context.Context, string, provider.Inbound) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got++
	return "", nil
}

// harness is a Server over the fakes, served in process.
type harness struct {
	t       *testing.T
	srv     *Server
	clock   *testClock
	store   *fakeStore
	msgs    *fakeMessages
	replies *fakeReplies
	// account is an enterprise account without limits; testKey and liveKey
	// are its keys.
	account          domain.Account
	testKey, liveKey string
	// remoteAddr is the TCP peer of every request (default 127.0.0.1).
	remoteAddr string
}

// newHarness starts a Server; configure may change its Config (the fakes
// are in it already).
func newHarness(t *testing.T, configure ...func(c *Config)) *harness {
	t.Helper()
	h := &harness{t: t, clock: &testClock{},
		store:   &fakeStore{keys: map[string]domain.APIKey{}, accounts: map[string]domain.Account{}, idem: map[[2]string]domain.Idempotency{}},
		msgs:    &fakeMessages{idem: map[[2]string]domain.Idempotency{}, messages: map[string]fakeScoped[domain.Message]{}, campaigns: map[string]fakeScoped[message.CampaignPage]{}},
		replies: &fakeReplies{}, remoteAddr: "127.0.0.1:40000"}
	h.clock.unixNano.Store(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixNano())
	limiter := ratelimit.NewMemory(h.clock.Now)
	cfg := Config{Store: h.store, Messages: h.msgs, Sends: h.msgs, Replies: h.replies, Limiter: limiter, Guard: limiter,
		Now: h.clock.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, c := range configure {
		c(&cfg)
	}
	h.srv = New(cfg)
	h.account, h.testKey = h.newAccount("enterprise", domain.Limits{})
	h.liveKey = h.newKey(h.account.ID, domain.Live)
	return h
}

// newAccount makes an account of tier with limits and a test key.
func (h *harness) newAccount(tier string, limits domain.Limits) (domain.Account, string) {
	h.store.mu.Lock()
	n := len(h.store.accounts) + 1
	a := domain.Account{ID: fmt.Sprintf("acc_%026d", n), Name: "Account " + strconv.Itoa(n), Tier: tier, Currency: "USD",
		Balance: 1000_000000, BalanceUpdatedAt: h.clock.Now(), Limits: limits}
	h.store.accounts[a.ID] = a
	h.store.mu.Unlock()
	return a, h.newKey(a.ID, domain.Test)
}

// newKey makes a key of env for an account and returns its secret.
func (h *harness) newKey(accountID string, env domain.Environment) string {
	k, err := apikey.Generate(string(env))
	if err != nil {
		h.t.Fatal(err)
	}
	h.store.mu.Lock()
	defer h.store.mu.Unlock()
	h.store.keys[k.Hash] = domain.APIKey{ID: fmt.Sprintf("key_%026d", len(h.store.keys)+1), AccountID: accountID, Env: env,
		Prefix: k.Prefix, Hash: k.Hash, CreatedAt: h.clock.Now()}
	return k.Secret
}

// scope is the scope of an account's key of env.
func scope(a domain.Account, env domain.Environment) message.Scope {
	return message.Scope{AccountID: a.ID, Env: env}
}

// response is an answer as a test reads it.
type response struct {
	body   []byte
	status int
	header http.Header
}

// decode reads a JSON answer into v.
func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("response is not JSON (%d): %s", r.status, r.body)
	}
}

func (r response) json(t *testing.T) (m map[string]any) {
	t.Helper()
	r.decode(t, &m)
	return m
}

// fields lists the fields a problem's errors name.
func (r response) fields(t *testing.T) []string {
	t.Helper()
	var p struct {
		Errors []struct {
			Field string `json:"field"`
		} `json:"errors"`
	}
	r.decode(t, &p)
	var out []string
	for _, e := range p.Errors {
		out = append(out, e.Field)
	}
	return out
}

// do serves one request with the key in X-API-KEY (none when key is ""); a
// body that is not a string is sent as JSON. headers are name, value pairs.
func (h *harness) do(method, path, key string, body any, headers ...string) response {
	h.t.Helper()
	text, ok := body.(string)
	if !ok && body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		text = string(raw)
	}
	req := httptest.NewRequest(method, path, strings.NewReader(text))
	req.RemoteAddr = h.remoteAddr
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-KEY", key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, req)
	return response{body: rec.Body.Bytes(), status: rec.Code, header: rec.Header()}
}

// send posts a send.
func (h *harness) send(key string, body any, headers ...string) response {
	h.t.Helper()
	return h.do("POST", "/api/v1/integration/messages", key, body, headers...)
}

// checkProblem asserts a problem+json answer of status and code that names
// the request.
func checkProblem(t *testing.T, what string, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("%s: content type %q", what, ct)
	}
	p := r.json(t)
	if p["code"] != code || p["status"] != float64(status) || p["requestId"] == nil || p["requestId"] != r.header.Get("X-Request-Id") {
		t.Errorf("%s: problem %s, want %d %s", what, r.body, status, code)
	}
}
