// Package app is msgsvc's command line and wiring: it parses commands,
// builds the parts, runs them and owns shutdown. cmd/msgsvc only calls Main.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
)

const usage = `msgsvc — a self-hostable messaging gateway (SMS, WhatsApp, RCS)

Usage:
  msgsvc dev      [flags]   run a complete local installation (SQLite, simulator, demo account)
  msgsvc serve    [flags]   run the production server
  msgsvc migrate  [--db D]  apply database migrations
  msgsvc backup   --to FILE [--db D]   a consistent copy of a SQLite database, taken while msgsvc runs
  msgsvc account create --name NAME [--tier free|basic|pro|enterprise] [--credits N] [--currency USD] [--country CC]
  msgsvc account settings --account ID [--rcs-fallback[=false]] [--wa-tier 1-4] [--ip-allowlist LIST]
                        [--quiet-hours 21:00-08:00|off] [--retention-days N] [--opt-out-reply TEXT] [--opt-in-reply TEXT]
  msgsvc account limits --account ID [--tier-rpm N] [--send-rpm N] [--status-rpm N] [--media-rpm N]
  msgsvc account prices --account ID [--set '{"home":{...},"abroad":{...},"countries":{"44":{...}}}']
  msgsvc account secret rotate --account ID   new webhook signing secret (both sign for 24 h)
  msgsvc key create|list|revoke --account ID [--env test|live] [--id KEY_ID]
  msgsvc smpp-user create|list|remove --account ID [--env test|live] [--system-id S] [--max-binds N] [--id USER_ID]
  msgsvc sender add|list|remove --account ID [--channel SMS --value Acme --default] [--id SENDER_ID]
  msgsvc optout list|add|remove --account ID [--env test|live] [--phone NUMBER]
  msgsvc credits add    --account ID --amount N [--note TEXT]
  msgsvc user create    --account ID --email E --role owner|admin|developer|viewer [--password-stdin]
  msgsvc user create    --operator --email E [--password-stdin]   an operator: every account, no account of its own
  msgsvc template create --account ID --name N --language en --category MARKETING|UTILITY|AUTHENTICATION --body "Hi {{1}}"
                        [--status APPROVED|PENDING|REJECTED] [--parameters "label 1,label 2"]
  msgsvc send     --to N --message TEXT [--type SMS|WHATSAPP|RCS] [--wait]   send through a running node's API
  msgsvc listen   [--secret whsec_…] [--forward-to URL]   receive, verify and print webhooks on 127.0.0.1:9000
  msgsvc usage    [--from DAY] [--to DAY] [--group-by day|month] [--channel SMS]   the key's usage and spend
  msgsvc bench    [flags]   load-test a node (one it starts, or --url) and report throughput and latency
  msgsvc version  [--json]  the version of this binary
  msgsvc config check FILE [--db D]  validate a providers and routes file (serve reloads it on SIGHUP)

The operator commands take --db (MSGSVC_DB) or --data (MSGSVC_DATA) as serve does, never create a database
(dev, serve and migrate do), and print JSON with --json; yes/no flags stand alone (--wait) or take =false.
Send, listen and usage talk to a
running node like any integrator's program (--url, --key; MSGSVC_URL, MSGSVC_API_KEY, MSGSVC_WEBHOOK_SECRET).
Run "msgsvc COMMAND -h" for a command's flags ("msgsvc account -h" lists the account commands).
`

// Main runs the command line and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch cmd := args[0]; cmd {
	case "dev", "serve":
		err = runServer(ctx, cmd == "dev", args[1:], stdout, stderr)
	case "migrate":
		err = runMigrate(ctx, args[1:], stdout, stderr)
	case "backup":
		err = runBackup(ctx, args[1:], stdout, stderr)
	case "account", "key", "credits", "user", "template", "sender", "optout", "smpp-user":
		err = runAdmin(ctx, cmd, args[1:], stdin, stdout, stderr)
	case "version":
		err = runVersion(args[1:], stdout, stderr)
	case "config":
		err = runConfig(ctx, args[1:], stdout, stderr)
	case "bench":
		err = runBench(ctx, args[1:], stdout, stderr)
	case "send":
		err = runSend(ctx, args[1:], stdout, stderr)
	case "listen":
		err = runListen(ctx, args[1:], stdout, stderr)
	case "usage":
		err = runUsage(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		err = fmt.Errorf("unknown command %q; run \"msgsvc help\" for the list", cmd)
	}
	if err == flag.ErrHelp {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "msgsvc:", err)
		return 1
	}
	return 0
}

func newLogger(w io.Writer, level string, text bool) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: l}
	if text {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func runServer(ctx context.Context, dev bool, args []string, stdout, stderr io.Writer) error {
	name := "serve"
	if dev {
		name = "dev"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if dev {
		fs.Usage = usageOf(fs, stdout, "msgsvc dev — a complete local installation: SQLite in ./msgsvc-data, the simulator, a demo account",
			"msgsvc dev --addr 127.0.0.1:8080")
	} else {
		fs.Usage = usageOf(fs, stdout, "msgsvc serve — the production server (every flag also has a MSGSVC_* environment variable)",
			"msgsvc serve --db postgres://msgsvc@db/msgsvc --addr 0.0.0.0:8080 --config msgsvc.yaml")
	}
	load := config.Flags(fs, dev)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := load()
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel, dev)
	gcPercent := tuneGC(os.Getenv, setGCPercent)
	srv, err := NewServer(ctx, cfg, log, Options{})
	if err != nil {
		return err
	}
	if dev {
		if err := devWelcome(ctx, srv, stdout); err != nil {
			return err
		}
	}
	attrs := []any{"addr", srv.Addr(), "db", redactDSN(cfg.DB), "node", cfg.NodeID, "dev", dev, "gcPercent", gcPercent}
	if a := srv.SMPPAddr(); a != "" {
		attrs = append(attrs, "smpp", a)
	}
	log.Info("msgsvc listening", attrs...)
	reloadOnHangup(ctx, srv, cfg.Config, log)
	return srv.Run(ctx)
}

// redactDSN hides a PostgreSQL password in logs.
func redactDSN(dsn string) string {
	if i := strings.Index(dsn, "://"); i >= 0 {
		if at := strings.LastIndex(dsn, "@"); at > i {
			if colon := strings.Index(dsn[i+3:at], ":"); colon >= 0 {
				return dsn[:i+3+colon] + ":***" + dsn[at:]
			}
		}
	}
	return dsn
}

// parseFlags parses a command's flags, which take no other arguments: a
// word left over is refused, since "--switch false" would otherwise turn
// the switch on and drop the "false".
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return nil
	}
	if i := len(args) - fs.NArg(); i > 0 && strings.HasPrefix(args[i-1], "-") {
		return fmt.Errorf("unexpected argument %q after %s: a yes/no flag takes its value after \"=\" (%s=%s), or stands alone for true",
			fs.Arg(0), args[i-1], args[i-1], fs.Arg(0))
	}
	return fmt.Errorf("unexpected argument %q", fs.Arg(0))
}

// dbFlag adds --data and --db as serve has them, and returns the
// database they name once fs was parsed.
func dbFlag(fs *flag.FlagSet) func() string {
	named := config.StoreFlags(fs)
	return func() string {
		_, db := named()
		return db
	}
}

// openStore opens the database, creating it if it does not exist, and
// migrates it: for the commands that make a database (migrate, bench).
func openStore(ctx context.Context, dsn string) (*store.Store, error) {
	st, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		return nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// openExisting is openStore for the commands that work on a database and
// must not make one by accident (run from another folder, the default
// ./msgsvc-data/msgsvc.db is not the node's): a SQLite file that does not
// exist is an error naming where to give the right one.
func openExisting(ctx context.Context, dsn string) (*store.Store, error) {
	if path, ok := sqlitePath(dsn); ok {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no database at %s: give the node's database with --db or MSGSVC_DB (or its data directory with --data or MSGSVC_DATA); only dev, serve and migrate create one", path)
		}
	}
	return openStore(ctx, dsn)
}

// sqlitePath is the file of a SQLite DSN (a path, sqlite:PATH or a
// file: URI); ok is false for PostgreSQL and in-memory databases.
func sqlitePath(dsn string) (string, bool) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return "", false
	}
	path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if path == "" || path == ":memory:" {
		return "", false
	}
	return path, true
}

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usageOf(fs, stdout, "msgsvc migrate — apply the database migrations (serve and dev also do it at start)",
		"msgsvc migrate --db postgres://msgsvc@db/msgsvc")
	db := dbFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	st, err := openStore(ctx, db())
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintln(stdout, "migrations applied")
	return nil
}

func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usageOf(fs, stdout, "msgsvc backup — a consistent copy of a SQLite database, taken while msgsvc runs (VACUUM INTO)",
		"msgsvc backup --to /backups/msgsvc-$(date -u +%Y%m%d-%H%M).db")
	db := dbFlag(fs)
	to := fs.String("to", "", "file to write; it must not exist (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *to == "" {
		return errors.New("--to is required: the file to write, e.g. --to /backups/msgsvc-20300101.db")
	}
	st, err := openExisting(ctx, db())
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Backup(ctx, *to); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backup written to %s; copy the media directory (DATA/media) with it\n", *to)
	return nil
}

func accountJSON(a domain.Account) map[string]any {
	return map[string]any{"id": a.ID, "name": a.Name, "tier": a.Tier, "currency": a.Currency, "country": a.CountryCode,
		"balance": ledger.Credits(a.Balance), "webhookSecret": a.WebhookSecret,
		"limits": map[string]int{"tierRpm": a.Limits.TierRPM, "sendRpm": a.Limits.SendRPM, "statusRpm": a.Limits.StatusRPM,
			"mediaRpm": a.Limits.MediaRPM}}
}
