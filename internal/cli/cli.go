// Package cli is msgsvc's command line: it parses commands and their
// flags, runs the operators' commands on the database, talks to a running
// node like any integrator's program (send, listen, usage) and drives the
// benchmark; dev and serve are run by the Node it is given (internal/app).
// cmd/msgsvc only calls Main.
package cli

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

	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/provider"
)

const usage = `msgsvc — a self-hostable messaging gateway (SMS, WhatsApp, RCS)

Usage:
  msgsvc dev      [flags]   run a complete local installation (SQLite, simulator, demo account)
  msgsvc serve    [flags]   run the production server
  msgsvc migrate  [--db D]  apply database migrations
  msgsvc backup   --to FILE [--db D]   a consistent copy of a SQLite database, taken while msgsvc runs
  msgsvc account create --name NAME [--tier free|basic|pro|enterprise] [--credits N] [--currency USD] [--country CC] [--plan ID]
  msgsvc account settings --account ID [--rcs-fallback[=false]] [--wa-tier 1-4] [--ip-allowlist LIST]
                        [--quiet-hours 21:00-08:00|off] [--retention-days N] [--opt-out-reply TEXT] [--opt-in-reply TEXT]
  msgsvc account limits --account ID [--tier-rpm N] [--send-rpm N] [--status-rpm N] [--media-rpm N]
  msgsvc account prices --account ID [--set '{"home":{...},"abroad":{...},"countries":{"44":{...}}}']
  msgsvc account secret rotate --account ID   new webhook signing secret (both sign for 24 h)
  msgsvc account plan --account ID --plan ID   put an account on a price plan ("" takes it off)
  msgsvc plan list|create|set [--plan ID] [--name N] [--prices '{"home":{"smsSegment":0.05}}'] [--default[=false]]
  msgsvc account statement --account ID [--month YYYY-MM] [--csv]   the month's statement
  msgsvc export messages|ledger|usage --account ID [--from DAY] [--to DAY] ...   CSV to standard output
  msgsvc key create|list|revoke --account ID [--env test|live] [--id KEY_ID]
  msgsvc smpp-user create|list|remove --account ID [--env test|live] [--system-id S] [--max-binds N] [--id USER_ID]
  msgsvc twilio-credentials create|list --account ID [--env test|live] [--api-key --parent AC…]   AC… SIDs, auth tokens, SK… keys
  msgsvc twilio-credentials remove --account ID SID
  msgsvc sender add|list|remove --account ID [--channel SMS --value Acme --default] [--id SENDER_ID]
  msgsvc optout list|add|remove --account ID [--env test|live] [--phone NUMBER]
  msgsvc fraud set|show --account ID|--default [--json FILE]   the fraud guard's rules (JSON as PUT /api/v1/manage/fraud)
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

// Node is what the command line runs of a node; internal/app provides it.
type Node interface {
	// Serve runs a node as dev (cfg.Dev) or serve until ctx ends.
	Serve(ctx context.Context, cfg config.Config, log *slog.Logger, stdout io.Writer) error
	// ProviderTypes are the adapter types this build runs.
	ProviderTypes() (*provider.Registry, error)
	// VersionInfo describes this binary; "version" is its version.
	VersionInfo() map[string]string
}

// Main runs the command line and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, node Node) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := Run(ctx, args, stdin, stdout, stderr, node)
	if err == flag.ErrHelp {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "msgsvc:", err)
		return 1
	}
	return 0
}

// Run runs one command (args[0]) and returns its error; help asked for
// is flag.ErrHelp, or nil for "msgsvc help".
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, node Node) error {
	switch cmd := args[0]; cmd {
	case "dev", "serve":
		return runServer(ctx, node, cmd == "dev", args[1:], stdout, stderr)
	case "migrate":
		return runMigrate(ctx, args[1:], stdout, stderr)
	case "backup":
		return runBackup(ctx, args[1:], stdout, stderr)
	case "account", "key", "credits", "user", "template", "sender", "optout", "smpp-user", "twilio-credentials", "fraud", "plan":
		return runAdmin(ctx, cmd, args[1:], stdin, stdout, stderr)
	case "version":
		return runVersion(node, args[1:], stdout, stderr)
	case "config":
		return runConfig(ctx, node, args[1:], stdout, stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "send":
		return runSend(ctx, node, args[1:], stdout, stderr)
	case "listen":
		return runListen(ctx, args[1:], stdout, stderr)
	case "usage":
		return runUsage(ctx, node, args[1:], stdout, stderr)
	case "export":
		return runExport(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		return fmt.Errorf("unknown command %q; run \"msgsvc help\" for the list", cmd)
	}
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

func runServer(ctx context.Context, node Node, dev bool, args []string, stdout, stderr io.Writer) error {
	name, summary, example := "serve", "msgsvc serve — the production server (every flag also has a MSGSVC_* environment variable)",
		"msgsvc serve --db postgres://msgsvc@db/msgsvc --addr 0.0.0.0:8080 --config msgsvc.yaml"
	if dev {
		name, summary, example = "dev", "msgsvc dev — a complete local installation: SQLite in ./msgsvc-data, the simulator, a demo account",
			"msgsvc dev --addr 127.0.0.1:8080"
	}
	fs := newFlags(name, stdout, stderr, summary, example)
	load := config.Flags(fs, dev)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := load()
	if err != nil {
		return err
	}
	return node.Serve(ctx, cfg, newLogger(stderr, cfg.LogLevel, dev), stdout)
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

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("migrate", stdout, stderr, "msgsvc migrate — apply the database migrations (serve and dev also do it at start)",
		"msgsvc migrate --db postgres://msgsvc@db/msgsvc")
	db := dbFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	st, err := bootstrap.OpenStore(ctx, db())
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintln(stdout, "migrations applied")
	return nil
}

func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("backup", stdout, stderr, "msgsvc backup — a consistent copy of a SQLite database, taken while msgsvc runs (VACUUM INTO)",
		"msgsvc backup --to /backups/msgsvc-$(date -u +%Y%m%d-%H%M).db")
	db := dbFlag(fs)
	to := fs.String("to", "", "file to write; it must not exist (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *to == "" {
		return errors.New("--to is required: the file to write, e.g. --to /backups/msgsvc-20300101.db")
	}
	st, err := bootstrap.OpenExisting(ctx, db())
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
	var parent any
	if a.ParentID != "" {
		parent = a.ParentID
	}
	return map[string]any{"id": a.ID, "name": a.Name, "tier": a.Tier, "currency": a.Currency, "country": a.CountryCode,
		"balance": ledger.Credits(a.Balance), "webhookSecret": a.WebhookSecret, "parentId": parent, "reseller": a.Reseller,
		"limits": map[string]int{"tierRpm": a.Limits.TierRPM, "sendRpm": a.Limits.SendRPM, "statusRpm": a.Limits.StatusRPM,
			"mediaRpm": a.Limits.MediaRPM}}
}
