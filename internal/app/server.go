package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/msgsvc/msgsvc/internal/api"
	"github.com/msgsvc/msgsvc/internal/api/notify"
	"github.com/msgsvc/msgsvc/internal/batch"
	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/dispatch"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/fraud"
	"github.com/msgsvc/msgsvc/internal/intake"
	"github.com/msgsvc/msgsvc/internal/keycache"
	"github.com/msgsvc/msgsvc/internal/lease"
	"github.com/msgsvc/msgsvc/internal/lifecycle"
	"github.com/msgsvc/msgsvc/internal/manage"
	"github.com/msgsvc/msgsvc/internal/media"
	"github.com/msgsvc/msgsvc/internal/message"
	"github.com/msgsvc/msgsvc/internal/panel"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/simulator"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
	"github.com/msgsvc/msgsvc/internal/sending"
	"github.com/msgsvc/msgsvc/internal/smppserver"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/template"
	"github.com/msgsvc/msgsvc/internal/tracking"
	"github.com/msgsvc/msgsvc/internal/twilio/callback"
	"github.com/msgsvc/msgsvc/internal/txn"
	"github.com/msgsvc/msgsvc/internal/user"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// Server is a running msgsvc node: HTTP front, dispatcher, webhook worker,
// simulator and sweeper over one store.
type Server struct {
	cfg     config.Config
	log     *slog.Logger
	store   *store.Store
	now     func() time.Time
	poll    time.Duration
	hasher  user.Hasher
	reg     *prometheus.Registry
	metrics *metrics

	// The queues: rows of the store leased to this node, and the rows
	// handed to it in memory.
	sendQueue  *lease.Queue[domain.Message]
	eventQueue *lease.Queue[domain.Event]
	// eventsWaiting is nil when nodes share the events (PostgreSQL).
	eventsWaiting *webhook.Waiting

	redactor  *compliance.Redactor
	tracker   *tracking.Tracker
	sim       *simulator.Simulator
	media     *media.Store // uploaded files, which providers send onwards
	templates *template.Service
	messages  *message.Service
	sends     *intake.Service
	adapters  []adapter
	// routing is the router in use; a reload of the configuration swaps it.
	routing *provider.Switch
	// deps are what adapters are built with; providerCtx is what they run
	// under, from the start of the node to stopProviderCtx; adaptersMu
	// guards adapters against a reload.
	deps            provider.Deps
	providerCtx     context.Context
	stopProviderCtx context.CancelFunc
	adaptersMu      sync.Mutex
	reloads         *reloadState
	services        services // background, in the order they start

	listener net.Listener
	http     *http.Server
	serveErr chan error // what ended serving before a stop
	closeRL  func() error
	// guard is the fraud guard of the sends; closeFraud releases its
	// shared counters' connections.
	guard      *fraud.Guard
	closeFraud func() error

	smpp         *smppserver.Server // nil unless --smpp-listen
	smppListener net.Listener

	// life is every part above that runs, in the order they start.
	life *lifecycle.Group
}

// Options are the parts of a server that tests replace.
type Options struct {
	// Now is the clock of every component (default time.Now).
	Now func() time.Time
	// Poll is how often the idle dispatcher and webhook worker look for
	// work that became due (default 1 s). Tests that move Now forward
	// shorten it, so that what they made due is picked up at once.
	Poll time.Duration
	// Hasher is the cost of the password hashes the node makes (zero:
	// user.Recommended()). Tests lower it: under the race detector one
	// hash at the recommended cost takes a third of a second.
	Hasher user.Hasher
}

// NewServer opens storage, applies migrations and wires every part. It
// listens at once (so callers learn the real address of ":0") but serves
// only when Run is called.
func NewServer(ctx context.Context, cfg config.Config, log *slog.Logger, opt Options) (*Server, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	st, err := store.Open(ctx, cfg.DB, store.Options{Now: opt.Now, Holder: cfg.NodeID})
	if err != nil {
		return nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, store: st, now: opt.Now, poll: opt.Poll, hasher: opt.Hasher}
	if err := s.wire(); err != nil {
		st.Close()
		return nil, err
	}
	return s, nil
}

// wire builds the node in the order its parts need each other: the store
// (open already), the queues over it, the services that write rows and
// hand them to the queues, the providers that report to the tracker, the
// background services that work the queues, and the HTTP front.
func (s *Server) wire() error {
	s.reg = prometheus.NewRegistry()
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.metrics = newMetrics(s.reg)
	s.reloads = newReloadState(s.reg)
	s.wireQueues()
	if err := s.wireServices(); err != nil {
		return err
	}
	s.routing = provider.NewSwitch(nil)
	router, err := s.providers(s.sim, s.tracker, s.reg)
	if err != nil {
		return err
	}
	s.routing.Swap(router)
	s.wireSending(s.routing)
	s.reg.MustRegister(newWriteCollector(func() map[string]batch.Stats {
		st, _ := s.store.WriteStats()
		return map[string]batch.Stats{"store": st, "sends": s.sends.CommitStats(), "reports": s.tracker.ReportStats()}
	}, func() store.TxStats { _, tx := s.store.WriteStats(); return tx }))
	s.wireBackground(s.routing)
	if err := s.wireHTTP(s.routing); err != nil {
		return err
	}
	s.serveErr = make(chan error, 1)
	s.life = s.parts()
	return nil
}

// wireQueues makes the lease queues of messages waiting for a provider and
// of webhook events waiting for their receiver. They need only the store:
// what works them is given to them when they run.
func (s *Server) wireQueues() {
	s.sendQueue = dispatch.NewDispatchQueue(dispatch.QueueConfig{Store: s.store, Owner: s.cfg.NodeID, Lease: s.cfg.DispatchLease,
		Workers: s.cfg.DispatchWorkers, Poll: s.poll, Now: s.now, Log: s.log})
	if !s.cfg.Postgres() {
		// This node alone writes and claims the events: it knows which
		// outcomes let events waiting in the table go.
		s.eventsWaiting = webhook.NewWaiting()
	}
	s.eventQueue = webhook.NewEventQueue(webhook.EventQueueConfig{Store: s.store, Owner: s.cfg.NodeID, Lease: s.cfg.WebhookLease,
		Poll: s.poll, Now: s.now, Log: s.log, Waiting: s.eventsWaiting})
}

// wireServices makes what the providers and the sends need: the tracker
// (which writes events leased to the local webhook worker), the simulator,
// media files and templates.
func (s *Server) wireServices() error {
	cfg, st := s.cfg, s.store
	var err error
	if s.redactor, err = redactorOf(cfg); err != nil {
		return err
	}
	// Each front writes what a change owes its clients, in the change's
	// transaction: the REST front its webhook events (the events feed),
	// which also carry the Twilio-compatible front's status callbacks and
	// inbound posts, and the SMPP front its receipts and replies.
	// The routing switch is made after the tracker; it is read at each
	// receipt and callback.
	ownSender := func(p string) string { return s.routing.OwnSender(p) }
	changes := tracking.Bind(st, func(tx *store.Tx) tracking.Tx { return tx },
		tracking.Notify(func(tx *store.Tx) callback.Tx { return tx },
			&notify.Webhooks[callback.Tx]{Handoff: s.eventQueue, Wake: s.eventQueue.Wake, Held: s.eventsWaiting.Note,
				Posts: &callback.Callbacks{OwnSender: ownSender}}),
		tracking.Notify(func(tx *store.Tx) smppserver.ReceiptTx { return tx },
			&smppserver.Receipts{Users: st, Wake: s.wakeSMPP, Handoff: smppHandoff{s}, OwnSender: ownSender}))
	s.tracker = tracking.NewTracker(tracking.Config{Store: st, Writer: changes, Due: s.sendQueue.Wake,
		Workers: commitWorkers(cfg), Late: !cfg.Postgres(), Hold: reportHold, Now: s.now})
	registerRiders(s.reg, s.tracker)
	simCfg := simulator.Config{Sink: s.tracker, Stale: st, Delay: cfg.SimulatorDelay, Log: s.log, Now: s.now, Node: cfg.NodeID}
	if cfg.SimJournal {
		simCfg.Journal = st
	}
	s.sim = simulator.New(simCfg)
	if s.media, err = media.New(context.Background(), media.Config{Repo: st, Dir: mediaDir(cfg), Now: s.now}); err != nil {
		return err
	}
	s.templates = template.New(st, s.now)
	return s.wireFraud()
}

// wireFraud makes the fraud guard: its counters are shared in Redis when
// the rate limits are (the same server, keys of their own), else kept in
// the database in each group commit's transaction.
func (s *Server) wireFraud() error {
	backend, closeFn, err := ratelimit.Open(s.cfg.RateLimitBackend, "msgsvc:fraud:", s.now)
	if err != nil {
		return err
	}
	cfg := fraud.Config{OnError: func(err error) {
		s.log.Warn("fraud counters in Redis unavailable; counting in the database for now", "err", err)
	}}
	if r, ok := backend.(*ratelimit.Redis); ok {
		cfg.Counters = fraud.NewRedis(r.Client(), "msgsvc:fraud:")
	}
	s.guard, s.closeFraud = fraud.New(cfg), closeFn
	return nil
}

// paceMax bounds how long a send waits for a dispatcher that is behind:
// one that does not move at all (a provider hanging until its timeouts)
// slows each send by this much at most, well within the timeouts of HTTP
// clients and of an ESME waiting for its submit_sm_resp.
const paceMax = time.Second

// wireSending makes the send service, which writes messages due at once
// leased to the local dispatcher and hands them to its queue.
func (s *Server) wireSending(router *provider.Switch) {
	cfg := s.cfg
	redaction := s.redactor.Redaction()
	sendMedia := sendMedia{files: s.media, urls: media.NewURLChecker(media.URLOptions{AllowPrivate: cfg.WebhookAllowPrivate,
		NoProbe: !cfg.MediaURLProbe})}
	s.sends = intake.NewService(intake.Config{Store: s.store, Writer: txn.As(s.store, func(tx *store.Tx) intake.SendTx { return tx }),
		Picker: router, AllowPrivateCallbacks: cfg.WebhookAllowPrivate, Media: sendMedia, Templates: sendTemplates{svc: s.templates},
		Wake: s.sendQueue.Wake, CommitWorkers: commitWorkers(cfg), Late: !cfg.Postgres(), Now: s.now, Dispatch: s.sendQueue,
		Guard: s.guard, Pace: &intake.Pace{Backlog: s.sendQueue, Behind: cfg.DispatchBacklog, Floor: s.sendQueue.Chunk(),
			Max: paceMax, Now: s.now, Waited: newPaceWatch(s.reg, s.log, s.now, s.sendQueue)}})
	s.messages = message.NewService(message.Config{Store: message.Storage{Store: s.store}, Redaction: &redaction,
		Now: s.now, Changes: s.tracker})
}

// wireBackground makes the background services, in the order they start:
// the webhook worker first and the dispatcher after the simulator, so that
// at a stop, in reverse order, what hands out work stops before what takes
// it.
func (s *Server) wireBackground(router *provider.Switch) {
	cfg, st, now, log := s.cfg, s.store, s.now, s.log
	deliverer := webhook.NewWorker(webhook.WorkerConfig{Queue: s.eventQueue, Waiting: s.eventsWaiting, Store: st, Log: log, Now: now,
		Sender: webhook.NewSender(webhook.SenderOptions{ClientOptions: webhook.ClientOptions{
			AllowPrivate: cfg.WebhookAllowPrivate, UserAgent: "msgsvc/" + Version}}),
		Schedule: cfg.WebhookRetrySchedule, Observe: s.metrics.webhook, Version: s.authCounter(signerReadGap).Get,
		Twilio: st})
	dispatcher := dispatch.NewDispatcher(dispatch.DispatcherConfig{Queue: s.sendQueue, Store: st, Routes: router, Holders: st,
		Tracker: s.tracker, Log: log, Now: now})
	receipts := &tracking.ReceiptChecker{Store: st, Providers: map[string]provider.Querier{}, Tracker: s.tracker,
		Overdue: cfg.ReceiptOverdue, Now: now, Log: log}
	for _, a := range s.adapters {
		if q := provider.CapabilitiesOf(a.p).Querier; q != nil {
			receipts.Providers[a.p.Name()] = adapterQuerier{s: s, name: a.p.Name()}
		}
	}
	sweeper := &tracking.Sweeper{Store: st, Tracker: s.tracker, Now: now, Log: log}
	retention := &compliance.Retention{Store: st, Redactor: s.redactor, Now: now, Interval: cfg.RetentionInterval, Log: log}
	s.services = services{
		{name: "webhook worker", run: deliverer.Run},
		{name: "simulator", run: s.sim.Run},
		{name: "dispatcher", run: dispatcher.Run},
		{name: "receipt checker", run: receipts.Run},
		{name: "sweeper", run: sweeper.Run},
		{name: "retention", run: retention.Run},
	}
}

// wireHTTP makes the HTTP front: rate limits, the panel, the API, and the
// listener.
func (s *Server) wireHTTP(router *provider.Switch) error {
	cfg, st, now, log := s.cfg, s.store, s.now, s.log
	backend, closeRL, err := ratelimit.Open(cfg.RateLimitBackend, "msgsvc:rl:", now)
	if err != nil {
		return err
	}
	s.closeRL = closeRL
	limiter := ratelimit.FailOpen(backend, func(err error) {
		s.metrics.rateLimitErrors.Inc()
		log.Warn("rate-limit backend unavailable; allowing requests", "err", err)
	})
	inspector, _ := limiter.(ratelimit.Inspector)
	// The panel's logins, new SMPP users and SMPP binds hash passwords in
	// one set of slots, so that together they stay within the memory the
	// slots are sized for.
	slots := user.NewSlots(manage.HashSlots())
	if err := s.wireSMPP(limiter, backend, slots); err != nil {
		return err
	}
	mg := manage.New(manage.Config{Store: st, Limiter: inspector, Redelivered: s.eventQueue.Wake, Slots: slots,
		SessionTTL: cfg.SessionTTL, Failures: backend, AllowPrivateWebhooks: cfg.WebhookAllowPrivate, Hasher: s.hasher,
		SMPPRemoved: s.smppRemoved, Now: now, Routes: router, Held: s.tracker})
	sends := sending.New(mg, s.sends, s.messages)
	pages, err := panel.New(panel.Config{Manage: mg, Sending: sends, Guard: backend, ClientAddr: api.Proxies(cfg.TrustedProxies).ClientAddr,
		TrustedProxies: cfg.TrustedProxies, Now: now, Log: log})
	if err != nil {
		return err
	}
	apiSrv := api.New(api.Config{Store: apiStore{Store: st, keys: s.keyCache()}, Messages: s.messages, Sends: s.sends, Replies: s.tracker,
		Limiter: limiter, Guard: backend, TrustedProxies: cfg.TrustedProxies, Manage: mg, Sending: sends, Panel: pages,
		Media: s.media, Templates: s.templates, ProviderWebhooks: s.providerWebhooks(),
		OptOuts: &compliance.OptOuts{Store: st, Now: now}, Twilio: s.twilioFront(limiter, backend),
		Registry: s.reg, Log: log, Now: now, Version: Version, Ready: func(ctx context.Context) map[string]string {
			out := s.providerHealth(router)
			if err := st.WriteHealth(); err != nil {
				// Reads still work, but a node that cannot write takes no
				// send: it must leave the load balancer's rotation.
				out["storage"] = "unavailable: " + err.Error()
			}
			if cfg.Config != "" {
				out["config"] = s.reloads.health()
			}
			out["rateLimit"] = "ok"
			if err := backend.Ping(ctx); err != nil {
				out["rateLimit"] = "unreachable (failing open): " + err.Error()
			}
			return out
		}})
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		if s.smppListener != nil {
			s.smppListener.Close()
		}
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	s.listener = ln
	s.http = &http.Server{Handler: apiSrv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	return nil
}

// redactorOf makes the redactor of data retention from the configured key,
// or from the one kept in the data directory (made at the first start).
func redactorOf(cfg config.Config) (*compliance.Redactor, error) {
	text := cfg.RedactionKey
	if text == "" {
		var err error
		if text, err = config.PersistentRedactionKey(dataDir(cfg)); err != nil {
			return nil, err
		}
	}
	key, err := compliance.ParseKey(text)
	if err != nil {
		return nil, fmt.Errorf("MSGSVC_REDACTION_KEY: %w", err)
	}
	return compliance.NewRedactor(key)
}

// apiStore is the store as the API reads it: keys come from the cache,
// which reads one version counter per request instead of the key and its
// account.
type apiStore struct {
	*store.Store
	keys *keycache.Cache
}

func (s apiStore) KeyByHash(ctx context.Context, hash string) (domain.APIKey, domain.Account, error) {
	return s.keys.KeyByHash(ctx, hash)
}

func (s apiStore) KeyByHashCached(ctx context.Context, hash string) (domain.APIKey, domain.Account, int64, error) {
	return s.keys.KeyByHashCached(ctx, hash)
}

// authCounter reads the auth counter for a cache of what the counter
// guards, taking the writer's own reads of it when they come first, and,
// where the store can be asked for them (SQLite), asking for them.
func (s *Server) authCounter(gap time.Duration) *keycache.Counter {
	c := keycache.NewCounter(s.store.AuthVersion, gap)
	c.Prompt(s.store.AskAuthVersion())
	s.store.WatchAuthVersion(c.Saw)
	return c
}

// keyCache caches API keys, taking the writer's reads of the auth counter
// when they come first.
func (s *Server) keyCache() *keycache.Cache {
	c := keycache.New(s.store)
	s.store.WatchAuthVersion(c.Saw)
	return c
}

// signerReadGap spaces the webhook signer's reads of the auth counter:
// each post still waits for a read that began after it asked (a rotated
// secret signs the very next webhook), but under load one read serves the
// posts of a millisecond instead of the few that arrived during the last
// read, which had cost 4 % of the node's CPU.
const signerReadGap = time.Millisecond

// reportHold is how long a group of reports waits for company while an
// earlier group is under way (tracking.Config.Hold). Receipts arrive one
// or a few at a time; on SQLite each group applied costs its statements
// and a share of a transaction whatever it holds. Measured on the
// simulator path at 8 concurrent senders: with the writer's linger, about
// 12 % less CPU a message and a status p99 a few milliseconds longer.
const reportHold = 2 * time.Millisecond

func commitWorkers(cfg config.Config) int {
	if cfg.CommitWorkers > 0 {
		return cfg.CommitWorkers
	}
	if cfg.Postgres() {
		// Two loops keep PostgreSQL busy now that a transaction costs a
		// few round trips; more make smaller groups, which cost the
		// database more per message (measured: 4 loops 844 µs of node +
		// database CPU per message, 2 loops 698 µs, at a higher rate).
		return 2
	}
	return 1
}

// mediaDir is <data>/media.
func mediaDir(cfg config.Config) string { return filepath.Join(dataDir(cfg), "media") }

// dataDir is the data directory. A config built in code (tests) may leave
// DataDir empty; the SQLite file's directory is the data directory then.
func dataDir(cfg config.Config) string {
	dir := cfg.DataDir
	if dir == "" && !cfg.Postgres() {
		dir = filepath.Dir(strings.TrimPrefix(cfg.DB, "sqlite:"))
	}
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "msgsvc-data")
	}
	return dir
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.listener.Addr().String() }

// Store gives commands run beside the server access to its storage.
func (s *Server) Store() *store.Store { return s.store }

// Run serves until ctx ends, then stops gracefully along the node's one
// shutdown path (parts): it stops taking requests, lets requests in
// flight finish, stops the background services in reverse order of their
// start (each finishes the work it claimed), and closes storage. Work not
// yet claimed stays in the database for the next start (or another node).
func (s *Server) Run(ctx context.Context) error {
	if err := s.life.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-s.serveErr:
	}
	s.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	return errors.Join(err, s.life.Stop(sctx))
}

// releaseLeases hands back what this node holds (store.ReleaseLeases): at
// start, what a crashed run under the same identity had claimed; at a stop,
// what it claimed and did not finish, for the other nodes.
func (s *Server) releaseLeases(what string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msgs, evs, err := s.store.ReleaseLeases(ctx, s.cfg.NodeID, s.now())
	var rcpts int64
	if err == nil {
		rcpts, err = s.store.ReleaseSMPPLeases(ctx, s.cfg.NodeID, s.now())
	}
	switch {
	case err != nil:
		s.log.Warn("release leases; they run out by themselves", "err", err)
	case msgs+evs+rcpts > 0:
		s.log.Info(what, "messages", msgs, "events", evs, "smppReceipts", rcpts, "node", s.cfg.NodeID)
	}
}

type metrics struct {
	webhookAttempts *prometheus.CounterVec
	webhookLatency  prometheus.Histogram
	rateLimitErrors prometheus.Counter
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		webhookAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "msgsvc_webhook_attempts_total",
			Help: "Webhook delivery attempts by outcome."}, []string{"outcome"}),
		webhookLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "msgsvc_webhook_attempt_duration_seconds",
			Help: "Duration of webhook delivery attempts.", Buckets: prometheus.DefBuckets}),
		rateLimitErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "msgsvc_ratelimit_backend_errors_total",
			Help: "Rate-limit checks that failed open because the backend was unreachable."}),
	}
	reg.MustRegister(m.webhookAttempts, m.webhookLatency, m.rateLimitErrors)
	return m
}

func (m *metrics) webhook(_ domain.Event, _ int, d time.Duration, delivered bool) {
	outcome := "failed"
	if delivered {
		outcome = "delivered"
	}
	m.webhookAttempts.WithLabelValues(outcome).Inc()
	m.webhookLatency.Observe(d.Seconds())
}
