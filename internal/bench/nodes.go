package bench

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/msgsvc/msgsvc/internal/apikey"
	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// Nodes are the nodes a run started, on one database, and the live key
// of the account they serve.
type Nodes struct {
	DSN  string
	URLs []string
	PIDs []int
	Key  string
	// Twilio is the account's login on the Twilio front (a front "twilio"
	// run only).
	Twilio TwilioLogin
	DB     DBProbe // nil unless the database is a PostgreSQL on this machine
	Stop   func()  // stops the nodes and removes what the run made (unless Keep)
}

// NodeSpec says which nodes to start.
type NodeSpec struct {
	DB       string // postgres://… (a fresh schema is made) or "" for a temporary SQLite
	SimDelay time.Duration
	Keep     bool // keep the temporary database
	Count    int
	Extra    []string // more flags of msgsvc dev
	Exe      string   // the binary; "" for this one
	// Front "twilio" also gives the account a live Twilio account SID and
	// an approved number to send from.
	Front string
	// ChildDepth, when above 0, puts the account that sends that many
	// levels below the bootstrapped one (a chain of resellers, each
	// pricing the next 10 % above its own), so that every send is charged
	// at every level.
	ChildDepth int
	// Setup, when set, writes more into the database before the nodes
	// start (the fraud bench's accounts and their history).
	Setup func(ctx context.Context, st *store.Store, now time.Time) error
}

// StartNodes bootstraps an account with unlimited rate limits and a
// live key, then starts the nodes and waits until they are ready.
func StartNodes(ctx context.Context, spec NodeSpec, stderr io.Writer) (*Nodes, error) {
	db, keep := spec.DB, spec.Keep
	dir, err := os.MkdirTemp("", "msgsvc-bench-")
	if err != nil {
		return nil, err
	}
	var cleanups []func()
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	if !keep {
		cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	}
	dsn := filepath.Join(dir, "msgsvc.db")
	var probe DBProbe
	if db != "" {
		dsn, probe, err = freshSchema(ctx, db, keep, &cleanups)
		if err != nil {
			cleanup()
			return nil, err
		}
	}
	st, err := openStore(ctx, dsn, spec.Exe)
	if err != nil {
		cleanup()
		return nil, err
	}
	now := time.Now().UTC()
	a, err := bootstrap.CreateAccount(ctx, st, bootstrap.NewAccount{Name: "Bench", Tier: "enterprise", Credits: 100_000_000, Currency: "USD", Country: "55"}, now)
	if err == nil {
		err = st.SetLimits(ctx, a.ID, domain.Limits{})
	}
	for d := 1; err == nil && d <= spec.ChildDepth; d++ {
		a, err = benchChild(ctx, st, a, d, now)
	}
	var k string
	if err == nil {
		var key apikey.Key
		key, _, err = bootstrap.CreateKey(ctx, st, a.ID, "live", now)
		k = key.Secret
	}
	var login TwilioLogin
	if err == nil && spec.Front == FrontTwilio {
		login, err = twilioLogin(ctx, st, a.ID, now)
	}
	if err == nil && spec.Setup != nil {
		err = spec.Setup(ctx, st, now)
	}
	st.Close()
	if err != nil {
		cleanup()
		return nil, err
	}
	exe := spec.Exe
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			cleanup()
			return nil, err
		}
	}
	out := &Nodes{Key: k, DSN: dsn, DB: probe, Twilio: login}
	for i := 0; i < spec.Count; i++ {
		port, err := freePort()
		if err != nil {
			cleanup()
			return nil, err
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		args := append([]string{"dev", "--data", dir, "--db", dsn, "--addr", addr, "--node-id", fmt.Sprintf("bench-%d", i)}, spec.Extra...)
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), "MSGSVC_SIMULATOR_DELAY="+spec.SimDelay.String(), "MSGSVC_LOG_LEVEL=warn")
		cmd.Stdout = io.Discard
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			cleanup()
			return nil, err
		}
		cleanups = append(cleanups, func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		})
		base := "http://" + addr
		if err := waitReady(ctx, base, 30*time.Second); err != nil {
			cleanup()
			return nil, err
		}
		out.URLs = append(out.URLs, base)
		out.PIDs = append(out.PIDs, cmd.Process.Pid)
	}
	out.Stop = cleanup
	return out, nil
}

// benchChild makes an account under parent at depth d, with unlimited
// rates, the bench's credits and prices 10 % above the defaults per level.
func benchChild(ctx context.Context, st *store.Store, parent domain.Account, d int, now time.Time) (domain.Account, error) {
	secret, err := webhook.NewSecret()
	if err != nil {
		return domain.Account{}, err
	}
	home, abroad := int64(ledger.Micro)*int64(10+d)/10, 2*int64(ledger.Micro)*int64(10+d)/10
	c := domain.Account{ID: id.New(id.Account, now), Name: fmt.Sprintf("Bench child %d", d), Tier: parent.Tier,
		Currency: parent.Currency, CountryCode: parent.CountryCode, WebhookSecret: secret, WAQualityTier: 1, CreatedAt: now,
		ParentID: parent.ID, Reseller: true,
		Prices: fmt.Sprintf(`{"home":{"smsSegment":%d,"rcsMessage":%d,"waConversation":%d},"abroad":{"smsSegment":%d,"rcsMessage":%d,"waConversation":%d}}`,
			home, home, abroad, abroad, home, abroad)}
	if err := st.CreateAccount(ctx, c); err != nil {
		return domain.Account{}, fmt.Errorf("child account: %w", err)
	}
	if err := st.SetLimits(ctx, c.ID, domain.Limits{}); err != nil {
		return domain.Account{}, err
	}
	if c.Balance, err = bootstrap.AddCredits(ctx, st, c.ID, 100_000_000*ledger.Micro, ledger.TopUp, "opening balance", now); err != nil {
		return domain.Account{}, err
	}
	return c, nil
}

// benchNumber is the approved number a Twilio front run sends from.
const benchNumber = "15550001111"

// twilioLogin gives the account what a Twilio customer has: a live account
// SID with its token, and a number of its own to send from.
func twilioLogin(ctx context.Context, st *store.Store, accountID string, now time.Time) (TwilioLogin, error) {
	hexOf := func() string {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		return hex.EncodeToString(b)
	}
	c := domain.TwilioCredential{Sid: "AC" + hexOf(), Kind: domain.TwilioAccountSid, AccountID: accountID, Env: domain.Live,
		Secret: hexOf(), Name: "bench", CreatedAt: now}
	if err := st.CreateTwilioCredential(ctx, c); err != nil {
		return TwilioLogin{}, fmt.Errorf("twilio credential: %w", err)
	}
	s := domain.Sender{ID: id.New(id.Sender, now), AccountID: accountID, Channel: domain.SMS, Value: benchNumber, CreatedAt: now}
	if err := st.AddSender(ctx, s); err != nil {
		return TwilioLogin{}, fmt.Errorf("sender: %w", err)
	}
	return TwilioLogin{AccountSid: c.Sid, AuthToken: c.Secret, From: "+" + benchNumber}, nil
}

// FinishedCounter counts the messages of a started node that reached a
// final status, reading its database directly: a run without callbacks
// has no webhooks to tell, and polling the API would add to the CPU
// measured.
func FinishedCounter(dsn string) (func(ctx context.Context) (int, error), func(), error) {
	driver := "sqlite"
	if strings.HasPrefix(dsn, "postgres") {
		driver = "pgx"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("open the bench database: %w", err)
	}
	final := []any{string(domain.Delivered), string(domain.Read), string(domain.Failed), string(domain.Canceled)}
	count := func(ctx context.Context) (int, error) {
		var n int
		err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages WHERE status IN ($1, $2, $3, $4)`, final...).Scan(&n)
		return n, err
	}
	return count, func() { db.Close() }, nil
}

// openStore opens the run's database for the bootstrap. With another
// binary for the nodes, that binary migrates it, so the nodes run on the
// schema they were built with.
func openStore(ctx context.Context, dsn, exe string) (*store.Store, error) {
	if exe == "" {
		return bootstrap.OpenStore(ctx, dsn)
	}
	if out, err := exec.CommandContext(ctx, exe, "migrate", "--db", dsn).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("migrate with %s: %w: %s", exe, err, out)
	}
	return store.Open(ctx, dsn, store.Options{})
}

// freshSchema makes a schema for the run and returns the nodes' DSN: the
// schema as their search path and its name as their application name, by
// which the probe (nil unless the server runs on this machine) finds their
// sessions.
func freshSchema(ctx context.Context, base string, keep bool, cleanups *[]func()) (string, DBProbe, error) {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	schema := "bench_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("create schema: %w", err)
	}
	*cleanups = append(*cleanups, func() {
		if !keep {
			_, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		}
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("application_name", "msgsvc-"+schema)
	u.RawQuery = q.Encode()
	return u.String(), localPostgres(ctx, admin, "msgsvc-"+schema, schema), nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func waitReady(ctx context.Context, base string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("node at %s not ready after %s", base, timeout)
}
