// Package config reads msgsvc's settings from flags, then MSGSVC_*
// environment variables, then defaults — in that order of precedence.
package config

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/webhook"
)

// Config is the whole configuration of a server process.
type Config struct {
	Dev     bool
	DataDir string
	DB      string
	Addr    string
	Config  string // provider configuration file

	WebhookRetrySchedule webhook.Schedule
	WebhookAllowPrivate  bool
	SimulatorDelay       time.Duration
	RateLimitBackend     string
	TrustedProxies       []netip.Prefix
	// SessionTTL is how long a panel session may stay idle.
	SessionTTL time.Duration

	SMPPAddr     string
	SMPPSystemID string
	SMPPPassword string

	// SMPPListen turns on the SMPP server for customers on host:port;
	// with SMPPTLSCert and SMPPTLSKey it speaks TLS there.
	SMPPListen  string
	SMPPTLSCert string
	SMPPTLSKey  string

	PprofAddr     string
	MediaURLProbe bool
	SimJournal    bool
	DispatchLease time.Duration
	WebhookLease  time.Duration
	NodeID        string
	// RedactionKey is the base64 HMAC key that hashes phone numbers for
	// data retention (default: kept in DATA/redaction-key).
	RedactionKey    string
	LogLevel        string
	DispatchWorkers int
	// DispatchBacklog is how long the oldest message waiting for this
	// node's dispatcher may have waited before sends due now are held
	// back until it catches up (0: never held back).
	DispatchBacklog time.Duration
	CommitWorkers   int
	ShutdownTimeout time.Duration
	// ReceiptOverdue is how long a message handed to a provider that can be
	// asked (SMPP) waits for its receipt before the provider is asked.
	ReceiptOverdue time.Duration
	// RetentionInterval is the time between rounds of the retention sweep
	// (default 1 minute; tests shorten it).
	RetentionInterval time.Duration
}

// Flags registers the server flags on fs and returns a function that
// finishes loading once fs was parsed. dev selects dev-mode defaults.
func Flags(fs *flag.FlagSet, dev bool) func() (Config, error) {
	env := func(name, def string) string { return envOr("MSGSVC_"+name, def) }
	f := &flagText{}
	f.nodeFlags(fs, env)
	f.httpFlags(fs, env)
	f.queueFlags(fs, env, dev)
	f.providerFlags(fs, env)
	f.smppServerFlags(fs, env)
	return func() (Config, error) {
		c := Config{Dev: dev}
		errs := f.node(&c)
		errs = append(errs, f.http(&c)...)
		errs = append(errs, f.queues(&c)...)
		errs = append(errs, f.providers(&c)...)
		errs = append(errs, f.smppServer(&c)...)
		return c, errors.Join(errs...)
	}
}

// flagText holds the flags' values as given (flag, environment or
// default), read into a Config once fs was parsed.
type flagText struct {
	store                                                          func() (dataDir, db string)
	addr, nodeID, redaction, logLevel, pprofAddr, shutdown         *string
	proxies, rlBackend, session, probe                             *string
	schedule, private, wLease, dLease, dispatch, commits, receipts *string
	cfgFile, simDelay, journal, smppAddr, smppID, smppPass         *string
	smppListen, smppCert, smppKey, backlog                         *string
}

// nodeFlags are the node's own: where it keeps its data, its name, its
// logs and how it stops.
func (f *flagText) nodeFlags(fs *flag.FlagSet, env func(name, def string) string) {
	f.store = StoreFlags(fs)
	f.addr = fs.String("addr", env("ADDR", "127.0.0.1:8080"), "listen address [MSGSVC_ADDR]")
	f.nodeID = fs.String("node-id", env("NODE_ID", ""), "this node's name in leases (default: kept in DATA/node-id) [MSGSVC_NODE_ID]")
	f.redaction = fs.String("redaction-key", env("REDACTION_KEY", ""), "base64 key (32+ bytes) of the keyed hash that replaces phone numbers past their retention; every node of a deployment needs the same (default: made once and kept in DATA/redaction-key) [MSGSVC_REDACTION_KEY]")
	f.logLevel = fs.String("log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error [MSGSVC_LOG_LEVEL]")
	f.pprofAddr = fs.String("pprof-addr", env("PPROF_ADDR", ""), "serve Go profiling endpoints on this address (off when empty) [MSGSVC_PPROF_ADDR]")
	f.shutdown = fs.String("shutdown-timeout", env("SHUTDOWN_TIMEOUT", "15s"), "how long a graceful stop may take [MSGSVC_SHUTDOWN_TIMEOUT]")
}

func (f *flagText) node(c *Config) []error {
	c.DataDir, c.DB = f.store()
	c.Addr, c.PprofAddr, c.NodeID, c.LogLevel = *f.addr, *f.pprofAddr, *f.nodeID, *f.logLevel
	var errs []error
	var err error
	if c.ShutdownTimeout, err = time.ParseDuration(*f.shutdown); err != nil || c.ShutdownTimeout <= 0 {
		errs = append(errs, fmt.Errorf("shutdown-timeout: %q is not a duration", *f.shutdown))
	}
	if c.NodeID == "" {
		c.NodeID = persistentNodeID(c.DataDir)
	}
	if c.RedactionKey = *f.redaction; c.RedactionKey == "" {
		if c.RedactionKey, err = PersistentRedactionKey(c.DataDir); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// StoreFlags registers --data and --db, which every command that opens
// the database takes, the same way: the database is --db, else
// DATA/msgsvc.db. The returned function reads them once fs was parsed.
func StoreFlags(fs *flag.FlagSet) func() (dataDir, db string) {
	data := fs.String("data", envOr("MSGSVC_DATA", "./msgsvc-data"), "data directory (SQLite file, media) [MSGSVC_DATA]")
	db := fs.String("db", envOr("MSGSVC_DB", ""), "database: a SQLite path, sqlite:PATH or postgres://… (default DATA/msgsvc.db) [MSGSVC_DB]")
	return func() (string, string) {
		if *db == "" {
			return *data, filepath.Join(*data, "msgsvc.db")
		}
		return *data, *db
	}
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// httpFlags are the HTTP front's: proxies, rate limits, panel sessions,
// media URLs.
func (f *flagText) httpFlags(fs *flag.FlagSet, env func(name, def string) string) {
	f.proxies = fs.String("trusted-proxies", env("TRUSTED_PROXIES", ""), "comma-separated addresses and CIDR ranges of proxies whose X-Forwarded-For names the client [MSGSVC_TRUSTED_PROXIES]")
	f.rlBackend = fs.String("rate-limit-backend", env("RATE_LIMIT_BACKEND", "memory"), "memory or redis://… [MSGSVC_RATE_LIMIT_BACKEND]")
	f.session = fs.String("session-ttl", env("SESSION_TTL", "12h"), "how long a panel session may stay idle before it expires [MSGSVC_SESSION_TTL]")
	f.probe = Switch(fs, "media-url-probe", env("MEDIA_URL_PROBE", "true"), "check media.url sends with a HEAD request to the (public) address [MSGSVC_MEDIA_URL_PROBE]")
}

func (f *flagText) http(c *Config) []error {
	c.RateLimitBackend = *f.rlBackend
	var errs []error
	var err error
	if c.TrustedProxies, err = parsePrefixes(*f.proxies); err != nil {
		errs = append(errs, fmt.Errorf("trusted-proxies: %w", err))
	}
	if c.RateLimitBackend != "memory" && c.RateLimitBackend != "" && !strings.HasPrefix(c.RateLimitBackend, "redis://") &&
		!strings.HasPrefix(c.RateLimitBackend, "rediss://") {
		errs = append(errs, fmt.Errorf("rate-limit-backend: must be memory or a redis:// URL"))
	}
	if c.SessionTTL, err = time.ParseDuration(*f.session); err != nil || c.SessionTTL < time.Minute {
		errs = append(errs, fmt.Errorf("session-ttl: %q must be a duration of at least 1m", *f.session))
	}
	if c.MediaURLProbe, err = strconv.ParseBool(*f.probe); err != nil {
		errs = append(errs, fmt.Errorf("media-url-probe: %w", err))
	}
	return errs
}

// queueFlags are the queues': how messages are committed and handed over,
// and how webhook events are delivered.
func (f *flagText) queueFlags(fs *flag.FlagSet, env func(name, def string) string, dev bool) {
	f.schedule = fs.String("webhook-retry-schedule", env("WEBHOOK_RETRY_SCHEDULE", ""), "webhook retry delays, e.g. 1s,2s,4s [MSGSVC_WEBHOOK_RETRY_SCHEDULE]")
	f.private = Switch(fs, "webhook-allow-private", env("WEBHOOK_ALLOW_PRIVATE", strconv.FormatBool(dev)), "allow http and private callback addresses [MSGSVC_WEBHOOK_ALLOW_PRIVATE]")
	f.wLease = fs.String("webhook-lease", env("WEBHOOK_LEASE", "60s"), "how long a node holds webhook events it claimed (more than the 5 s timeout) [MSGSVC_WEBHOOK_LEASE]")
	f.dLease = fs.String("dispatch-lease", env("DISPATCH_LEASE", "30s"), "how long a node holds messages it claimed before another may take them [MSGSVC_DISPATCH_LEASE]")
	f.dispatch = fs.String("dispatch-workers", env("DISPATCH_WORKERS", "2"), "parallel dispatch loops [MSGSVC_DISPATCH_WORKERS]")
	f.backlog = fs.String("dispatch-backlog", env("DISPATCH_BACKLOG", "100ms"), "how long messages may wait for this node's dispatcher before new sends wait for it to catch up (0: never) [MSGSVC_DISPATCH_BACKLOG]")
	f.commits = fs.String("commit-workers", env("COMMIT_WORKERS", "0"), "parallel group-commit loops (0: 1 on SQLite, 2 on PostgreSQL) [MSGSVC_COMMIT_WORKERS]")
	f.receipts = fs.String("receipt-overdue", env("RECEIPT_OVERDUE", "10m"), "how long a message handed to an SMSC waits for its receipt before the SMSC is asked (query_sm) [MSGSVC_RECEIPT_OVERDUE]")
}

func (f *flagText) queues(c *Config) []error {
	var errs []error
	var err error
	if c.WebhookAllowPrivate, err = strconv.ParseBool(*f.private); err != nil {
		errs = append(errs, fmt.Errorf("webhook-allow-private: %w", err))
	}
	if *f.schedule != "" {
		if c.WebhookRetrySchedule, err = webhook.ParseSchedule(*f.schedule); err != nil {
			errs = append(errs, fmt.Errorf("webhook-retry-schedule: %w", err))
		}
	} else {
		c.WebhookRetrySchedule = webhook.DefaultSchedule()
	}
	if c.DispatchLease, err = time.ParseDuration(*f.dLease); err != nil || c.DispatchLease < time.Second {
		errs = append(errs, fmt.Errorf("dispatch-lease: %q must be a duration of at least 1s", *f.dLease))
	}
	if c.WebhookLease, err = time.ParseDuration(*f.wLease); err != nil || c.WebhookLease < 6*time.Second {
		errs = append(errs, fmt.Errorf("webhook-lease: %q must be a duration of at least 6s (longer than the 5 s delivery timeout)", *f.wLease))
	}
	if c.ReceiptOverdue, err = time.ParseDuration(*f.receipts); err != nil || c.ReceiptOverdue < time.Second {
		errs = append(errs, fmt.Errorf("receipt-overdue: %q must be a duration of at least 1s", *f.receipts))
	}
	if c.DispatchWorkers, err = strconv.Atoi(*f.dispatch); err != nil || c.DispatchWorkers < 1 {
		errs = append(errs, fmt.Errorf("dispatch-workers: must be a positive number"))
	}
	if c.DispatchBacklog, err = time.ParseDuration(*f.backlog); err != nil || c.DispatchBacklog < 0 {
		errs = append(errs, fmt.Errorf("dispatch-backlog: %q must be a duration, 0 or more", *f.backlog))
	}
	if c.CommitWorkers, err = strconv.Atoi(*f.commits); err != nil || c.CommitWorkers < 0 {
		errs = append(errs, fmt.Errorf("commit-workers: must be 0 or more"))
	}
	return errs
}

// providerFlags are the providers': the configuration file, the SMPP
// shortcut and the simulator.
func (f *flagText) providerFlags(fs *flag.FlagSet, env func(name, def string) string) {
	f.cfgFile = fs.String("config", env("CONFIG", ""), "provider configuration file [MSGSVC_CONFIG]")
	f.smppAddr = fs.String("smpp-addr", env("SMPP_ADDR", ""), "SMSC host:port for live SMS [MSGSVC_SMPP_ADDR]")
	f.smppID = fs.String("smpp-system-id", env("SMPP_SYSTEM_ID", ""), "SMPP system_id [MSGSVC_SMPP_SYSTEM_ID]")
	f.smppPass = fs.String("smpp-password", env("SMPP_PASSWORD", ""), "SMPP password [MSGSVC_SMPP_PASSWORD]")
	f.simDelay = fs.String("simulator-delay", env("SIMULATOR_DELAY", "300ms"), "delay between simulated status steps [MSGSVC_SIMULATOR_DELAY]")
	f.journal = Switch(fs, "simulator-journal", env("SIMULATOR_JOURNAL", "false"), "keep the simulated carrier's record of hand-overs in the database (multi-node tests) [MSGSVC_SIMULATOR_JOURNAL]")
}

func (f *flagText) providers(c *Config) []error {
	c.Config, c.SMPPAddr, c.SMPPSystemID, c.SMPPPassword = *f.cfgFile, *f.smppAddr, *f.smppID, *f.smppPass
	var errs []error
	var err error
	if c.SimulatorDelay, err = time.ParseDuration(*f.simDelay); err != nil || c.SimulatorDelay < 0 {
		errs = append(errs, fmt.Errorf("simulator-delay: %q is not a duration", *f.simDelay))
	}
	if c.SimJournal, err = strconv.ParseBool(*f.journal); err != nil {
		errs = append(errs, fmt.Errorf("simulator-journal: %w", err))
	}
	if (c.SMPPAddr != "") != (c.SMPPSystemID != "") {
		errs = append(errs, errors.New("smpp: set both MSGSVC_SMPP_ADDR and MSGSVC_SMPP_SYSTEM_ID"))
	}
	return errs
}

// smppServerFlags are the SMPP server's, for customers' ESMEs.
func (f *flagText) smppServerFlags(fs *flag.FlagSet, env func(name, def string) string) {
	f.smppListen = fs.String("smpp-listen", env("SMPP_LISTEN", ""), "serve SMPP 3.4 to customers' ESMEs on host:port (off when empty) [MSGSVC_SMPP_LISTEN]")
	f.smppCert = fs.String("smpp-tls-cert", env("SMPP_TLS_CERT", ""), "PEM certificate: serve SMPP over TLS on --smpp-listen [MSGSVC_SMPP_TLS_CERT]")
	f.smppKey = fs.String("smpp-tls-key", env("SMPP_TLS_KEY", ""), "PEM private key of --smpp-tls-cert [MSGSVC_SMPP_TLS_KEY]")
}

func (f *flagText) smppServer(c *Config) []error {
	c.SMPPListen, c.SMPPTLSCert, c.SMPPTLSKey = *f.smppListen, *f.smppCert, *f.smppKey
	var errs []error
	if c.SMPPListen != "" {
		if _, _, err := net.SplitHostPort(c.SMPPListen); err != nil {
			errs = append(errs, fmt.Errorf("smpp-listen: %q is not host:port", c.SMPPListen))
		}
	}
	if (c.SMPPTLSCert != "") != (c.SMPPTLSKey != "") {
		errs = append(errs, errors.New("smpp-tls-cert and smpp-tls-key go together"))
	}
	if c.SMPPTLSCert != "" && c.SMPPListen == "" {
		errs = append(errs, errors.New("smpp-tls-cert: needs --smpp-listen"))
	}
	return errs
}

// Switch registers a boolean flag whose default is text (from an
// environment variable, checked once the flags are parsed): written bare
// (--name) it is true, and --name=true and --name=false work too. Its
// default may be "" for a switch that is left unchanged unless given.
func Switch(fs *flag.FlagSet, name, def, usage string) *string {
	s := &switchValue{text: def}
	fs.Var(s, name, usage)
	return &s.text
}

// switchValue is a flag.Value that the flag package treats as boolean.
type switchValue struct{ text string }

func (s *switchValue) String() string {
	if s == nil {
		return ""
	}
	return s.text
}

func (s *switchValue) Set(v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q is not true or false", v)
	}
	s.text = strconv.FormatBool(b)
	return nil
}

func (s *switchValue) IsBoolFlag() bool { return true }

// parsePrefixes reads comma-separated addresses (as single-address
// ranges) and CIDR ranges.
func parsePrefixes(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		if p, err := netip.ParsePrefix(e); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(e)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an address nor a CIDR range", e)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// persistentNodeID is this node's name in leases: kept in DATA/node-id so
// that it survives a restart, and a restarted node takes back at once what
// its dead predecessor had claimed. Two processes must not share a data
// directory (nor an id). Without a writable data directory the name is
// host-pid, and a crashed node's claims wait for their leases to run out.
func persistentNodeID(dataDir string) string {
	host, _ := os.Hostname()
	fallback := fmt.Sprintf("%s-%d", host, os.Getpid())
	if dataDir == "" {
		return fallback
	}
	path := filepath.Join(dataDir, "node-id")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b))
	}
	var r [4]byte
	if _, err := rand.Read(r[:]); err != nil {
		return fallback
	}
	id := fmt.Sprintf("%s-%x", host, r)
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return fallback
	}
	if err := os.WriteFile(path, []byte(id+"\n"), 0o640); err != nil {
		return fallback
	}
	return id
}

// PersistentRedactionKey is the key that hashes phone numbers past their
// retention, kept in DATA/redaction-key (mode 0600) and made at the first
// start. It lives outside the database on purpose: a copy of the database
// alone must not let anyone test candidate numbers against the hashes.
// Nodes that share a database must share the key too (give every node the
// same MSGSVC_REDACTION_KEY, or the same file), or the same number would
// hash differently on each.
func PersistentRedactionKey(dataDir string) (string, error) {
	if dataDir == "" {
		return "", errors.New("redaction key: no data directory to keep it in; set MSGSVC_REDACTION_KEY")
	}
	path := filepath.Join(dataDir, "redaction-key")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("redaction key: %w", err)
	}
	key := base64.StdEncoding.EncodeToString(raw)
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return "", fmt.Errorf("redaction key: %w", err)
	}
	// Written aside (CreateTemp makes it 0600) and linked into place: of two processes starting at
	// once, one key wins and both use it, and nobody reads half a file.
	tmp, err := os.CreateTemp(dataDir, ".redaction-key-*")
	if err != nil {
		return "", fmt.Errorf("redaction key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(key + "\n"); err != nil {
		tmp.Close()
		return "", fmt.Errorf("redaction key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("redaction key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("redaction key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if b, rerr := os.ReadFile(path); rerr == nil && len(strings.TrimSpace(string(b))) > 0 {
			return strings.TrimSpace(string(b)), nil
		}
		return "", fmt.Errorf("redaction key: %w", err)
	}
	return key, nil
}

// Postgres reports whether the database is PostgreSQL.
func (c Config) Postgres() bool {
	return strings.HasPrefix(c.DB, "postgres://") || strings.HasPrefix(c.DB, "postgresql://")
}
