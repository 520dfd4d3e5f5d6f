// Package app is msgsvc's command line and wiring: it parses commands,
// builds the parts, runs them and owns shutdown. cmd/msgsvc only calls Main.
package app

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"msgsvc/internal/config"
	"msgsvc/internal/ledger"
	"msgsvc/internal/store"
)

const usage = `msgsvc — a self-hostable messaging gateway (SMS, WhatsApp, RCS)

Usage:
  msgsvc dev      [flags]   run a complete local installation (SQLite, simulator, demo account)
  msgsvc serve    [flags]   run the production server
  msgsvc migrate  [--db D]  apply database migrations
  msgsvc account create --name NAME [--tier free|basic|pro|enterprise] [--credits N] [--currency USD] [--country CC]
  msgsvc account settings --account ID [--rcs-fallback true|false] [--wa-tier 1-4] [--ip-allowlist LIST]
  msgsvc account limits --account ID [--tier-rpm N] [--send-rpm N] [--status-rpm N] [--media-rpm N]
  msgsvc account prices --account ID [--set '{"home":{...},"abroad":{...},"countries":{"44":{...}}}']
  msgsvc account secret rotate --account ID   new webhook signing secret (both sign for 24 h)
  msgsvc key create|list|revoke --account ID [--env test|live] [--id KEY_ID]
  msgsvc sender add|list|remove --account ID [--channel SMS --value Acme --default] [--id SENDER_ID]
  msgsvc credits add    --account ID --amount N [--note TEXT]
  msgsvc user create    --account ID --email E --role owner|admin|developer|viewer [--password-stdin]
  msgsvc template create --account ID --name N --language en --category MARKETING|UTILITY|AUTHENTICATION --body "Hi {{1}}"
                        [--status APPROVED|PENDING|REJECTED] [--parameters "label 1,label 2"]
  msgsvc bench    [flags]   load-test a node (one it starts, or --url) and report throughput and latency
  msgsvc version  [--json]  the version of this binary

Every command takes --db (MSGSVC_DB) and the bootstrap commands print JSON with --json.
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
		err = runMigrate(ctx, args[1:], stdout)
	case "account", "key", "credits", "user", "template", "sender":
		err = runAdmin(ctx, cmd, args[1:], stdin, stdout, stderr)
	case "version":
		err = runVersion(args[1:], stdout, stderr)
	case "bench":
		err = runBench(ctx, args[1:], stdout, stderr)
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
	load := config.Flags(fs, dev)
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := load()
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel, dev)
	srv, err := NewServer(ctx, cfg, log, Options{})
	if err != nil {
		return err
	}
	if dev {
		if err := devWelcome(ctx, srv, stdout); err != nil {
			return err
		}
	}
	log.Info("msgsvc listening", "addr", srv.Addr(), "db", redactDSN(cfg.DB), "node", cfg.NodeID, "dev", dev)
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

// dbFlag adds --db with the same default as serve.
func dbFlag(fs *flag.FlagSet) *string {
	def := os.Getenv("MSGSVC_DB")
	if def == "" {
		dir := os.Getenv("MSGSVC_DATA")
		if dir == "" {
			dir = "./msgsvc-data"
		}
		def = dir + "/msgsvc.db"
	}
	return fs.String("db", def, "database: a SQLite path or postgres://… [MSGSVC_DB]")
}

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

func runMigrate(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	db := dbFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	st, err := openStore(ctx, *db)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintln(stdout, "migrations applied")
	return nil
}

func accountJSON(a store.Account) map[string]any {
	return map[string]any{"id": a.ID, "name": a.Name, "tier": a.Tier, "currency": a.Currency, "country": a.CountryCode,
		"balance": ledger.Credits(a.Balance), "webhookSecret": a.WebhookSecret,
		"limits": map[string]int{"tierRpm": a.Limits.TierRPM, "sendRpm": a.Limits.SendRPM, "statusRpm": a.Limits.StatusRPM,
			"mediaRpm": a.Limits.MediaRPM}}
}
