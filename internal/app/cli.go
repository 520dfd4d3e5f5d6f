// Package app is msgsvc's command line and wiring: it parses commands,
// builds the parts, runs them and owns shutdown. cmd/msgsvc only calls Main.
package app

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"msgsvc/internal/config"
	"msgsvc/internal/ledger"
	"msgsvc/internal/store"
	"msgsvc/internal/template"
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
  msgsvc key create     --account ID --env test|live
  msgsvc credits add    --account ID --amount N [--note TEXT]
  msgsvc user create    --account ID --email E --role owner|admin|developer|viewer [--password-stdin]
  msgsvc template create --account ID --name N --language en --category MARKETING|UTILITY|AUTHENTICATION --body "Hi {{1}}"
                        [--status APPROVED|PENDING|REJECTED] [--parameters "label 1,label 2"]
  msgsvc bench    [flags]   load-test a node (one it starts, or --url) and report throughput and latency

Every command takes --db (MSGSVC_DB) and the bootstrap commands print JSON with --json.
Run "msgsvc COMMAND -h" for a command's flags.
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
	case "account", "key", "credits", "user", "template":
		if len(args) < 2 {
			err = fmt.Errorf("%s needs a subcommand; see msgsvc -h", cmd)
			break
		}
		err = runAdmin(ctx, cmd+" "+args[1], args[2:], stdin, stdout)
	case "bench":
		err = runBench(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		err = fmt.Errorf("unknown command %q", cmd)
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

func runAdmin(ctx context.Context, cmd string, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	db := dbFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	var (
		name, tier, currency, country, accountID, env, note, email, role *string
		credits, amount                                                  *float64
		tierRPM, sendRPM, statusRPM, mediaRPM                            *int
		pwStdin                                                          *bool
	)
	var language, category, tplStatus, tplBody, tplParams *string // template create
	var prices *string                                            // account prices
	var rcsFallback, allowlist *string                            // account settings
	var waTier *int                                               // account settings
	switch cmd {
	case "account create":
		name = fs.String("name", "", "account name (required)")
		tier = fs.String("tier", "free", "free, basic, pro or enterprise")
		credits = fs.Float64("credits", 0, "opening credits")
		currency = fs.String("currency", "USD", "currency code")
		country = fs.String("country", "1", "home country calling code, used for pricing")
	case "account settings":
		accountID = fs.String("account", "", "account id (required)")
		rcsFallback = fs.String("rcs-fallback", "", "true or false: send RCS to devices without RCS as SMS by default")
		waTier = fs.Int("wa-tier", 0, "WhatsApp quality tier 1-4 (daily new conversations 1000, 10000, 100000, unlimited)")
		allowlist = fs.String("ip-allowlist", "-", "comma-separated addresses and CIDR ranges allowed to use the API; empty allows all")
	case "account limits":
		accountID = fs.String("account", "", "account id (required)")
		tierRPM = fs.Int("tier-rpm", -1, "tier requests per minute (0 = unlimited)")
		sendRPM = fs.Int("send-rpm", -1, "sending requests per minute (0 = unlimited)")
		statusRPM = fs.Int("status-rpm", -1, "status queries per minute (0 = unlimited)")
		mediaRPM = fs.Int("media-rpm", -1, "media uploads per minute (0 = unlimited)")
	case "account prices":
		accountID = fs.String("account", "", "account id (required)")
		prices = fs.String("set", "", `price table in credits, e.g. {"home":{"smsSegment":1},"countries":{"44":{"smsSegment":3}}}; `+
			`rates: smsSegment, rcsMessage, waConversation, waInWindow; "{}" restores the defaults; without it the table is shown`)
	case "key create":
		accountID = fs.String("account", "", "account id (required)")
		env = fs.String("env", "test", "test or live")
	case "credits add":
		accountID = fs.String("account", "", "account id (required)")
		amount = fs.Float64("amount", 0, "credits to add (negative to deduct)")
		note = fs.String("note", "", "why, for the ledger")
	case "user create":
		accountID = fs.String("account", "", "account id (required)")
		email = fs.String("email", "", "login email (required)")
		role = fs.String("role", "developer", "owner, admin, developer or viewer")
		pwStdin = fs.Bool("password-stdin", false, "read the password from standard input (else one is generated)")
	case "template create":
		accountID = fs.String("account", "", "account id (required)")
		name = fs.String("name", "", "template name: lower-case letters, digits and _ (required)")
		language = fs.String("language", "en", "language code, e.g. en or pt_BR")
		category = fs.String("category", "", "MARKETING, UTILITY or AUTHENTICATION (required)")
		tplStatus = fs.String("status", template.Approved, "review status: APPROVED, PENDING or REJECTED")
		tplBody = fs.String("body", "", "text with {{1}}, {{2}}, … placeholders (required)")
		tplParams = fs.String("parameters", "", "comma-separated labels of the placeholders (default {{1}}, {{2}}, …)")
	default:
		return fmt.Errorf("unknown command %q", cmd)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if accountID != nil && *accountID == "" {
		return fmt.Errorf("--account is required")
	}
	st, err := openStore(ctx, *db)
	if err != nil {
		return err
	}
	defer st.Close()
	now := time.Now().UTC()
	var out any
	var human string
	switch cmd {
	case "account create":
		a, err := CreateAccount(ctx, st, NewAccount{Name: *name, Tier: *tier, Credits: *credits, Currency: *currency, Country: *country}, now)
		if err != nil {
			return err
		}
		out = accountJSON(a)
		human = fmt.Sprintf("account %s created (tier %s, balance %v %s)\nwebhook signing secret: %s\n",
			a.ID, a.Tier, ledger.Credits(a.Balance), a.Currency, a.WebhookSecret)
	case "account limits":
		a, err := st.Account(ctx, *accountID)
		if err != nil {
			return fmt.Errorf("account %s: %w", *accountID, err)
		}
		l := a.Limits
		for _, f := range []struct {
			v   int
			dst *int
		}{{*tierRPM, &l.TierRPM}, {*sendRPM, &l.SendRPM}, {*statusRPM, &l.StatusRPM}, {*mediaRPM, &l.MediaRPM}} {
			if f.v >= 0 {
				*f.dst = f.v
			}
		}
		if err := st.SetLimits(ctx, a.ID, l); err != nil {
			return err
		}
		a.Limits = l
		out = accountJSON(a)
		human = fmt.Sprintf("limits of %s: tier %d/min, sending %d/min, status %d/min, media %d/min (0 = unlimited)\n",
			a.ID, l.TierRPM, l.SendRPM, l.StatusRPM, l.MediaRPM)
	case "account settings":
		a, err := st.Account(ctx, *accountID)
		if err != nil {
			return fmt.Errorf("account %s: %w", *accountID, err)
		}
		if *rcsFallback != "" {
			v, err := strconv.ParseBool(*rcsFallback)
			if err != nil {
				return fmt.Errorf("--rcs-fallback must be true or false")
			}
			a.RCSFallback = v
		}
		if *waTier != 0 {
			if *waTier < 1 || *waTier > 4 {
				return fmt.Errorf("--wa-tier must be 1, 2, 3 or 4")
			}
			a.WAQualityTier = *waTier
		}
		if *allowlist != "-" {
			a.IPAllowlist = nil
			for _, e := range strings.Split(*allowlist, ",") {
				if e = strings.TrimSpace(e); e == "" {
					continue
				}
				if _, perr := netip.ParsePrefix(e); perr != nil {
					if _, aerr := netip.ParseAddr(e); aerr != nil {
						return fmt.Errorf("--ip-allowlist: %q is neither an address nor a CIDR range", e)
					}
				}
				a.IPAllowlist = append(a.IPAllowlist, e)
			}
		}
		if err := st.UpdateAccountSettings(ctx, a.ID, a.IPAllowlist, a.RCSFallback, a.WAQualityTier); err != nil {
			return err
		}
		out = map[string]any{"id": a.ID, "rcsFallback": a.RCSFallback, "waQualityTier": a.WAQualityTier, "ipAllowlist": a.IPAllowlist}
		human = fmt.Sprintf("settings of %s: RCS fallback %v, WhatsApp quality tier %d, IP allow-list %v\n",
			a.ID, a.RCSFallback, a.WAQualityTier, a.IPAllowlist)
	case "account prices":
		a, err := st.Account(ctx, *accountID)
		if err != nil {
			return fmt.Errorf("account %s: %w", *accountID, err)
		}
		table, err := ledger.Parse(a.Prices)
		if err != nil {
			return fmt.Errorf("account %s: %w", a.ID, err)
		}
		if *prices != "" {
			var stored string
			if stored, table, err = ledger.ParsePriceTable([]byte(*prices), a.CountryCode); err != nil {
				return err
			}
			if err := st.SetPrices(ctx, a.ID, stored); err != nil {
				return err
			}
		}
		shown := ledger.PriceTableJSON(table)
		out = map[string]any{"accountId": a.ID, "country": a.CountryCode, "prices": shown}
		raw, _ := json.MarshalIndent(shown, "", "  ")
		human = fmt.Sprintf("prices of %s (home calling code %s), in credits:\n%s\n", a.ID, a.CountryCode, raw)
	case "key create":
		k, rec, err := CreateKey(ctx, st, *accountID, *env, now)
		if err != nil {
			return err
		}
		out = map[string]any{"key": k.Secret, "id": rec.ID, "accountId": rec.AccountID, "env": rec.Env, "prefix": rec.Prefix}
		human = fmt.Sprintf("%s key %s created for %s (shown only now):\n%s\n", rec.Env, rec.ID, rec.AccountID, k.Secret)
	case "credits add":
		micro, err := ledger.FromCredits(*amount)
		if err != nil || micro == 0 {
			return fmt.Errorf("--amount must be a non-zero amount with at most 6 decimals")
		}
		kind := ledger.TopUp
		if micro < 0 {
			kind = ledger.Adjust
		}
		bal, err := addCredits(ctx, st, *accountID, micro, kind, *note, now)
		if err != nil {
			return fmt.Errorf("credits for %s: %w", *accountID, err)
		}
		out = map[string]any{"accountId": *accountID, "amount": ledger.Credits(micro), "balance": ledger.Credits(bal)}
		human = fmt.Sprintf("balance of %s is now %v\n", *accountID, ledger.Credits(bal))
	case "user create":
		pw := ""
		if *pwStdin {
			line, err := bufio.NewReader(stdin).ReadString('\n')
			if err != nil && err != io.EOF {
				return fmt.Errorf("read password: %w", err)
			}
			pw = strings.TrimRight(line, "\r\n")
			if pw == "" {
				return fmt.Errorf("empty password on standard input")
			}
		}
		u, password, err := CreateUser(ctx, st, *accountID, *email, *role, pw, now)
		if err != nil {
			return err
		}
		res := map[string]any{"id": u.ID, "accountId": u.AccountID, "email": u.Email, "role": u.Role}
		human = fmt.Sprintf("user %s (%s) created\n", u.Email, u.Role)
		if !*pwStdin {
			res["password"] = password
			human += "password (shown only now): " + password + "\n"
		}
		out = res
	case "template create":
		var labels []string
		if *tplParams != "" {
			labels = strings.Split(*tplParams, ",")
			for i := range labels {
				labels[i] = strings.TrimSpace(labels[i])
			}
		}
		if _, err := st.Account(ctx, *accountID); err != nil {
			return fmt.Errorf("account %s: %w", *accountID, err)
		}
		t, err := template.New(st, nil).Create(ctx, *accountID, template.NewTemplate{Name: *name, Language: *language,
			Category: *category, Status: *tplStatus, Body: *tplBody, Parameters: labels})
		if err != nil {
			return err
		}
		out = map[string]any{"accountId": *accountID, "name": t.Name, "language": t.Language, "category": t.Category,
			"status": t.Status, "body": t.Body, "parameters": t.Parameters}
		human = fmt.Sprintf("template %s (%s) created for %s, %s, %d parameters\n", t.Name, t.Language, *accountID,
			t.Status, len(t.Parameters))
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	_, err = io.WriteString(stdout, human)
	return err
}

func accountJSON(a store.Account) map[string]any {
	return map[string]any{"id": a.ID, "name": a.Name, "tier": a.Tier, "currency": a.Currency, "country": a.CountryCode,
		"balance": ledger.Credits(a.Balance), "webhookSecret": a.WebhookSecret,
		"limits": map[string]int{"tierRpm": a.Limits.TierRPM, "sendRpm": a.Limits.SendRPM, "statusRpm": a.Limits.StatusRPM,
			"mediaRpm": a.Limits.MediaRPM}}
}
