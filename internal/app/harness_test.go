package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/msgsvc/msgsvc/internal/apikey"
	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
	"github.com/msgsvc/msgsvc/internal/template"
	"github.com/msgsvc/msgsvc/internal/user"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// clock is time.Now plus an offset that a test can push forward, so that
// validity expiry and retry schedules are tested without sleeping through
// them while the real timers of the workers keep running.
type clock struct{ offset atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// StartMinute moves the clock to one second past the next whole minute.
// The rate limiter's windows are whole minutes of this clock, so a test
// that counts a burst against a per-minute limit starts here: a burst that
// straddled a window's end would be counted in two windows.
func (c *clock) StartMinute() {
	now := c.Now()
	c.Advance(now.Truncate(time.Minute).Add(time.Minute + time.Second).Sub(now))
}

// env is a running msgsvc node on a fresh database, with a demo account,
// a test key, a live key and a webhook receiver.
type env struct {
	t       *testing.T
	srv     *Server
	st      *store.Store
	base    string
	clock   *clock
	account domain.Account
	testKey string
	liveKey string
	hooks   *receiver
	client  *http.Client
	stop    func()
	// file is the node's configuration file when envOptions.file set one.
	file *configFile
}

type envOptions struct {
	allowPrivate  *bool
	noLiveRoutes  bool
	noTemplates   bool
	credits       float64
	retrySchedule string
	// file, when set, is the node's configuration file (YAML): live traffic
	// takes its providers and routes instead of the simulator's, and the
	// test may rewrite it (env.file) before a reload.
	file string
	// lease is the dispatcher's lease (default the node's); a hand-over to
	// an SMSC that stops answering gives up within half of it.
	lease time.Duration
	// config adds to the node's configuration, after file and lease.
	config func(c *config.Config)
	// log receives the node's log at debug level (default: discarded).
	log io.Writer
	// poll is how often idle workers look for due work (default 1 s); a
	// test that moves the clock far shortens it.
	poll time.Duration
}

func newEnv(t *testing.T, dialect string, o envOptions) *env {
	t.Helper()
	dsn := storetest.Migrated(t, dialect)
	allow := true
	if o.allowPrivate != nil {
		allow = *o.allowPrivate
	}
	sched := webhook.Schedule{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond}
	if o.retrySchedule != "" {
		var err error
		if sched, err = webhook.ParseSchedule(o.retrySchedule); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Config{Dev: !o.noLiveRoutes, DB: dsn, DataDir: t.TempDir(), Addr: "127.0.0.1:0", WebhookAllowPrivate: allow, SimulatorDelay: 30 * time.Millisecond,
		WebhookRetrySchedule: sched, RateLimitBackend: "memory", NodeID: "test-node", DispatchWorkers: 2,
		ShutdownTimeout: 5 * time.Second, LogLevel: "error"}
	var file *configFile
	if o.file != "" {
		file = newConfigFile(t, o.file)
		file.serve(&cfg)
	}
	if o.lease != 0 {
		cfg.DispatchLease = o.lease
	}
	if o.config != nil {
		o.config(&cfg)
	}
	clk := &clock{}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if o.log != nil {
		log = slog.New(slog.NewTextHandler(o.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	srv, err := NewServer(context.Background(), cfg, log, Options{Now: clk.Now, Poll: o.poll, Hasher: testHasher})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	e := &env{t: t, srv: srv, st: srv.Store(), base: "http://" + srv.Addr(), clock: clk, hooks: newReceiver(t), file: file,
		client: &http.Client{Transport: recordTraffic(t, &http.Transport{MaxIdleConnsPerHost: 64})}}
	stopped := false
	e.stop = func() {
		if stopped {
			return
		}
		stopped = true
		// Connections the client opened but never used would hold up the
		// server's graceful shutdown.
		e.client.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server stopped with %v", err)
		}
	}
	t.Cleanup(e.stop)
	credits := o.credits
	if credits == 0 {
		credits = 1000
	}
	now := clk.Now()
	if e.account, err = CreateAccount(context.Background(), e.st, NewAccount{Name: "Acme", Tier: "enterprise", Credits: credits,
		Currency: "USD", Country: "55"}, now); err != nil {
		t.Fatal(err)
	}
	if err := e.st.SetLimits(context.Background(), e.account.ID, domain.Limits{}); err != nil {
		t.Fatal(err)
	}
	tk, _, err := CreateKey(context.Background(), e.st, e.account.ID, "test", now)
	if err != nil {
		t.Fatal(err)
	}
	lk, _, err := CreateKey(context.Background(), e.st, e.account.ID, "live", now)
	if err != nil {
		t.Fatal(err)
	}
	e.testKey, e.liveKey = tk.Secret, lk.Secret
	tpls := template.New(e.st, clk.Now)
	seed := []template.NewTemplate{
		{Name: "a", Language: "en", Body: "Hi there"},
		{Name: "second", Language: "en", Body: "A second campaign"},
		{Name: "order", Language: "en", Body: "Order {{1}} is {{2}}"},
		{Name: "order_shipped", Language: "en", Body: "Hi {{1}}, your order shipped"},
		{Name: "order_shipped", Language: "pt_BR", Body: "Olá {{1}}, o pedido {{2}} foi enviado"},
		{Name: "promo", Language: "en", Body: "Big sale today", Category: template.Marketing},
		{Name: "draft", Language: "en", Body: "Not approved yet", Status: "PENDING"},
	}
	if o.noTemplates {
		seed = nil
	}
	for _, nt := range seed {
		if nt.Category == "" {
			nt.Category = template.Utility
		}
		if _, err := tpls.Create(context.Background(), e.account.ID, nt); err != nil {
			t.Fatalf("template %s: %v", nt.Name, err)
		}
	}
	e.hooks.secret, e.hooks.now = e.account.WebhookSecret, clk.Now
	return e
}

// forEachDialect runs a test on SQLite and PostgreSQL; the PostgreSQL run
// is skipped, saying so, when it is not configured.
func forEachDialect(t *testing.T, fn func(t *testing.T, dialect string)) {
	for _, d := range storetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			storetest.Need(t, d)
			fn(t, d)
		})
	}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response is not JSON (%d): %s", r.status, r.body)
	}
	return m
}

// do sends a request with the key in X-API-KEY (or none when key is "").
func (e *env) do(method, path, key string, body any, headers ...string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-KEY", key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

// receiver is an integrator's webhook endpoint that verifies every
// signature with the Standard Webhooks reference library.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	secret string
	// now is the node's clock, which tests push ahead of the real one: the
	// webhook-timestamp is checked against it.
	now func() time.Time

	mu       sync.Mutex
	events   []hook
	failNext int // answer 500 to this many requests
	status   int // answer with this status when set (e.g. 410)
	badSigs  int
	// delay, when set, is how long the receiver takes before it records
	// and answers a request: a receiver slower on some requests than on
	// others.
	delay func() time.Duration
}

type hook struct {
	id      string
	payload map[string]any
	raw     []byte
	header  http.Header
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) url() string { return r.srv.URL + "/hooks" }

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	delay := r.delay
	r.mu.Unlock()
	if delay != nil {
		time.Sleep(delay()) // a slow receiver, not a wait for something
	}
	wh, err := standardwebhooks.NewWebhook(r.secret)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil || wh.VerifyIgnoringTimestamp(body, req.Header) != nil || !r.recent(req.Header.Get("webhook-timestamp")) ||
		req.Header.Get("X-Service-Signature") != req.Header.Get("webhook-signature") {
		r.badSigs++
		w.WriteHeader(400)
		return
	}
	if r.failNext > 0 {
		r.failNext--
		w.WriteHeader(500)
		return
	}
	if r.status != 0 {
		w.WriteHeader(r.status)
		return
	}
	recordExchange(r.t, exchange{Kind: "webhook", Body: string(body)})
	var p map[string]any
	_ = json.Unmarshal(body, &p)
	r.events = append(r.events, hook{id: req.Header.Get("webhook-id"), payload: p, raw: body, header: req.Header.Clone()})
	w.WriteHeader(204)
}

// recent reports whether a webhook-timestamp is within the Standard
// Webhooks tolerance (5 minutes) of the node's clock.
func (r *receiver) recent(ts string) bool {
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	now := time.Now
	if r.now != nil {
		now = r.now
	}
	d := now().Sub(time.Unix(sec, 0))
	return d < 5*time.Minute && d > -5*time.Minute
}

// forMessage returns the statuses received for a message, in order.
func (r *receiver) forMessage(id string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, h := range r.events {
		if h.payload["messageId"] == id {
			out = append(out, h.payload["status"].(string))
		}
	}
	return out
}

func (r *receiver) all() []hook {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hook(nil), r.events...)
}

// first waits for a webhook whose payload match accepts and returns that
// payload; what names it in the failure.
func (r *receiver) first(what string, match func(p map[string]any) bool) map[string]any {
	r.t.Helper()
	var got map[string]any
	polltest.For(r.t, what, 10*time.Second, func() bool {
		for _, h := range r.all() {
			if match(h.payload) {
				got = h.payload
				return true
			}
		}
		return false
	})
	return got
}

// isReply matches the webhook of a reply (message_received).
func isReply(p map[string]any) bool { return p["event"] == "message_received" }

func (r *receiver) set(f func(r *receiver)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r)
}

// testHasher makes the tests' password hashes: what a hash costs is not
// what these tests test (internal/user does), and at the recommended cost
// one takes a third of a second under the race detector.
var testHasher = user.Hasher{Time: 1, Memory: 64, Threads: 1}

// createTestUser is CreateUser at the tests' hashing cost.
func createTestUser(ctx context.Context, st *store.Store, accountID, email, role, password string, now time.Time) (domain.User, string, error) {
	m := manage.New(manage.Config{Store: st, Hasher: testHasher, Now: func() time.Time { return now }})
	return m.CreateUser(ctx, manage.Console, manage.NewUser{AccountID: accountID, Email: email, Role: role, Password: password})
}

// configFile is a node's configuration file, in a folder of its own that
// may hold the files it names (cost tables, credentials).
type configFile struct {
	t    *testing.T
	path string
}

func newConfigFile(t *testing.T, yaml string) *configFile {
	t.Helper()
	f := &configFile{t: t, path: filepath.Join(t.TempDir(), "msgsvc.yaml")}
	f.write(yaml)
	return f
}

// write replaces the file's text; the node reads it at its next reload.
func (f *configFile) write(yaml string) {
	f.t.Helper()
	f.beside(filepath.Base(f.path), []byte(yaml))
}

// beside writes a file into the configuration's folder and returns its
// path.
func (f *configFile) beside(name string, content []byte) string {
	f.t.Helper()
	path := filepath.Join(filepath.Dir(f.path), name)
	if err := os.WriteFile(path, content, 0o600); err != nil {
		f.t.Fatal(err)
	}
	return path
}

// serve makes the node read the file rather than run the simulator.
func (f *configFile) serve(c *config.Config) { c.Dev, c.Config = false, f.path }

// addAccount creates another account on e's node, at e's clock.
func (e *env) addAccount(in NewAccount) domain.Account {
	e.t.Helper()
	a, err := CreateAccount(context.Background(), e.st, in, e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// addKey makes an API key of account in env ("test" or "live"), at e's
// clock.
func (e *env) addKey(account, env string) (apikey.Key, domain.APIKey) {
	e.t.Helper()
	k, rec, err := CreateKey(context.Background(), e.st, account, env, e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return k, rec
}
