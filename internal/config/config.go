// Package config reads msgsvc's settings from flags, then MSGSVC_*
// environment variables, then defaults — in that order of precedence.
package config

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"msgsvc/internal/webhook"
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

	SMPPAddr     string
	SMPPSystemID string
	SMPPPassword string

	PprofAddr       string
	MediaURLProbe   bool
	SimJournal      bool
	DispatchLease   time.Duration
	WebhookLease    time.Duration
	NodeID          string
	LogLevel        string
	DispatchWorkers int
	CommitWorkers   int
	ShutdownTimeout time.Duration
}

// Flags registers the server flags on fs and returns a function that
// finishes loading once fs was parsed. dev selects dev-mode defaults.
func Flags(fs *flag.FlagSet, dev bool) func() (Config, error) {
	env := func(name, def string) string {
		if v, ok := os.LookupEnv("MSGSVC_" + name); ok {
			return v
		}
		return def
	}
	var (
		dataDir   = fs.String("data", env("DATA", "./msgsvc-data"), "data directory (SQLite file, media) [MSGSVC_DATA]")
		db        = fs.String("db", env("DB", ""), "database: a SQLite path, sqlite:PATH or postgres://… (default DATA/msgsvc.db) [MSGSVC_DB]")
		addr      = fs.String("addr", env("ADDR", "127.0.0.1:8080"), "listen address [MSGSVC_ADDR]")
		cfgFile   = fs.String("config", env("CONFIG", ""), "provider configuration file [MSGSVC_CONFIG]")
		schedule  = fs.String("webhook-retry-schedule", env("WEBHOOK_RETRY_SCHEDULE", ""), "webhook retry delays, e.g. 1s,2s,4s [MSGSVC_WEBHOOK_RETRY_SCHEDULE]")
		private   = fs.String("webhook-allow-private", env("WEBHOOK_ALLOW_PRIVATE", strconv.FormatBool(dev)), "allow http and private callback addresses [MSGSVC_WEBHOOK_ALLOW_PRIVATE]")
		simDelay  = fs.String("simulator-delay", env("SIMULATOR_DELAY", "300ms"), "delay between simulated status steps [MSGSVC_SIMULATOR_DELAY]")
		proxies   = fs.String("trusted-proxies", env("TRUSTED_PROXIES", ""), "comma-separated addresses and CIDR ranges of proxies whose X-Forwarded-For names the client [MSGSVC_TRUSTED_PROXIES]")
		rlBackend = fs.String("rate-limit-backend", env("RATE_LIMIT_BACKEND", "memory"), "memory or redis://… [MSGSVC_RATE_LIMIT_BACKEND]")
		smppAddr  = fs.String("smpp-addr", env("SMPP_ADDR", ""), "SMSC host:port for live SMS [MSGSVC_SMPP_ADDR]")
		smppID    = fs.String("smpp-system-id", env("SMPP_SYSTEM_ID", ""), "SMPP system_id [MSGSVC_SMPP_SYSTEM_ID]")
		smppPass  = fs.String("smpp-password", env("SMPP_PASSWORD", ""), "SMPP password [MSGSVC_SMPP_PASSWORD]")
		dLease    = fs.String("dispatch-lease", env("DISPATCH_LEASE", "30s"), "how long a node holds messages it claimed before another may take them [MSGSVC_DISPATCH_LEASE]")
		wLease    = fs.String("webhook-lease", env("WEBHOOK_LEASE", "60s"), "how long a node holds webhook events it claimed (more than the 5 s timeout) [MSGSVC_WEBHOOK_LEASE]")
		journal   = fs.String("simulator-journal", env("SIMULATOR_JOURNAL", "false"), "keep the simulated carrier's record of hand-overs in the database (multi-node tests) [MSGSVC_SIMULATOR_JOURNAL]")
		probe     = fs.String("media-url-probe", env("MEDIA_URL_PROBE", "true"), "check media.url sends with a HEAD request to the (public) address [MSGSVC_MEDIA_URL_PROBE]")
		pprofAddr = fs.String("pprof-addr", env("PPROF_ADDR", ""), "serve Go profiling endpoints on this address (off when empty) [MSGSVC_PPROF_ADDR]")
		nodeID    = fs.String("node-id", env("NODE_ID", ""), "this node's name in leases (default: kept in DATA/node-id) [MSGSVC_NODE_ID]")
		logLevel  = fs.String("log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error [MSGSVC_LOG_LEVEL]")
		dispatch  = fs.String("dispatch-workers", env("DISPATCH_WORKERS", "2"), "parallel dispatch loops [MSGSVC_DISPATCH_WORKERS]")
		commits   = fs.String("commit-workers", env("COMMIT_WORKERS", "0"), "parallel group-commit loops (0: 1 on SQLite, 4 on PostgreSQL) [MSGSVC_COMMIT_WORKERS]")
		shutdown  = fs.String("shutdown-timeout", env("SHUTDOWN_TIMEOUT", "15s"), "how long a graceful stop may take [MSGSVC_SHUTDOWN_TIMEOUT]")
	)
	return func() (Config, error) {
		c := Config{Dev: dev, DataDir: *dataDir, DB: *db, Addr: *addr, Config: *cfgFile, RateLimitBackend: *rlBackend,
			SMPPAddr: *smppAddr, SMPPSystemID: *smppID, SMPPPassword: *smppPass, PprofAddr: *pprofAddr, NodeID: *nodeID, LogLevel: *logLevel}
		var errs []error
		if c.DB == "" {
			c.DB = filepath.Join(c.DataDir, "msgsvc.db")
		}
		var err error
		if c.WebhookAllowPrivate, err = strconv.ParseBool(*private); err != nil {
			errs = append(errs, fmt.Errorf("webhook-allow-private: %w", err))
		}
		if *schedule != "" {
			if c.WebhookRetrySchedule, err = webhook.ParseSchedule(*schedule); err != nil {
				errs = append(errs, fmt.Errorf("webhook-retry-schedule: %w", err))
			}
		} else {
			c.WebhookRetrySchedule = webhook.DefaultSchedule()
		}
		if c.SimulatorDelay, err = time.ParseDuration(*simDelay); err != nil || c.SimulatorDelay < 0 {
			errs = append(errs, fmt.Errorf("simulator-delay: %q is not a duration", *simDelay))
		}
		if c.SimJournal, err = strconv.ParseBool(*journal); err != nil {
			errs = append(errs, fmt.Errorf("simulator-journal: %w", err))
		}
		if c.MediaURLProbe, err = strconv.ParseBool(*probe); err != nil {
			errs = append(errs, fmt.Errorf("media-url-probe: %w", err))
		}
		if c.DispatchLease, err = time.ParseDuration(*dLease); err != nil || c.DispatchLease < time.Second {
			errs = append(errs, fmt.Errorf("dispatch-lease: %q must be a duration of at least 1s", *dLease))
		}
		if c.WebhookLease, err = time.ParseDuration(*wLease); err != nil || c.WebhookLease < 6*time.Second {
			errs = append(errs, fmt.Errorf("webhook-lease: %q must be a duration of at least 6s (longer than the 5 s delivery timeout)", *wLease))
		}
		if c.ShutdownTimeout, err = time.ParseDuration(*shutdown); err != nil || c.ShutdownTimeout <= 0 {
			errs = append(errs, fmt.Errorf("shutdown-timeout: %q is not a duration", *shutdown))
		}
		if c.DispatchWorkers, err = strconv.Atoi(*dispatch); err != nil || c.DispatchWorkers < 1 {
			errs = append(errs, fmt.Errorf("dispatch-workers: must be a positive number"))
		}
		if c.CommitWorkers, err = strconv.Atoi(*commits); err != nil || c.CommitWorkers < 0 {
			errs = append(errs, fmt.Errorf("commit-workers: must be 0 or more"))
		}
		if c.RateLimitBackend != "memory" && c.RateLimitBackend != "" && !strings.HasPrefix(c.RateLimitBackend, "redis://") &&
			!strings.HasPrefix(c.RateLimitBackend, "rediss://") {
			errs = append(errs, fmt.Errorf("rate-limit-backend: must be memory or a redis:// URL"))
		}
		if (c.SMPPAddr != "") != (c.SMPPSystemID != "") {
			errs = append(errs, errors.New("smpp: set both MSGSVC_SMPP_ADDR and MSGSVC_SMPP_SYSTEM_ID"))
		}
		if c.TrustedProxies, err = parsePrefixes(*proxies); err != nil {
			errs = append(errs, fmt.Errorf("trusted-proxies: %w", err))
		}
		if c.NodeID == "" {
			c.NodeID = persistentNodeID(c.DataDir)
		}
		return c, errors.Join(errs...)
	}
}

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

// Postgres reports whether the database is PostgreSQL.
func (c Config) Postgres() bool {
	return strings.HasPrefix(c.DB, "postgres://") || strings.HasPrefix(c.DB, "postgresql://")
}
