package app

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/msgsvc/msgsvc/internal/apikey"
	"github.com/msgsvc/msgsvc/internal/bench"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/store"
)

// runBench is `msgsvc bench`: against --url, or against a node it starts
// itself (this same binary, `dev` mode so live keys reach the simulator)
// on a temporary SQLite database or a fresh schema of --db postgres://….
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usageOf(fs, stdout, "msgsvc bench — load-test a node (one it starts, or --url) and report throughput, latency and CPU",
		"msgsvc bench --n 5000 --c 16")
	var (
		target   = fs.String("url", "", "base URL of a running node, or several comma-separated (default: start one)")
		receiver = fs.String("receiver", "127.0.0.1:0", "host:port of the webhook receiver, reachable from the nodes (for nodes on other machines)")
		key      = fs.String("key", "", "API key for --url")
		pid      = fs.Int("pid", 0, "process id of the node at --url, to measure its CPU and memory")
		db       = fs.String("db", "", "for a started node: postgres://… (a fresh schema is made and dropped) or empty for a temporary SQLite")
		n        = fs.Int("n", 20000, "messages to send")
		c        = fs.Int("c", 32, "concurrent connections")
		batch    = fs.Int("batch", 1, "recipients per request")
		typ      = fs.String("type", "SMS", "SMS, WHATSAPP or RCS")
		simDelay = fs.Duration("sim-delay", 100*time.Millisecond, "simulator delay between status steps (started node)")
		wait     = fs.Duration("wait", 60*time.Second, "how long to wait for the last webhooks")
		asJSON   = fs.Bool("json", false, "print the result as JSON")
		keep     = fs.Bool("keep", false, "keep the temporary database")
		extra    = fs.String("node-args", "", "extra flags for the started node, space-separated")
		nodes    = fs.Int("nodes", 1, "started nodes sharing the database (PostgreSQL only for more than one)")
		smscAddr = fs.String("smpp", "", "started node: send the SMS over SMPP to the SMSC at this host:port (e.g. the simulator of shared/peers/smsc-sim)")
		smscID   = fs.String("smpp-system-id", "kannel", "SMPP system_id for --smpp")
		smscPass = fs.String("smpp-password", "kannel", "SMPP password for --smpp")
		peerPID  = fs.Int("peer-pid", 0, "process id of a peer (the SMSC simulator) whose CPU is reported apart")
		noHooks  = fs.Bool("no-callback", false, "send without callbackUrl (started node only): completion is read from its database")
		nodeExe  = fs.String("node-exe", "", "binary to start the nodes with (default: this one), to compare builds with one load generator")
		rate     = fs.Float64("rate", 0, "requests per second over all connections (0: as fast as they go), to load nodes equally in runs with different node counts")
	)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	opts := bench.Options{Key: *key, N: *n, C: *c, Type: strings.ToUpper(*typ), Wait: *wait, PID: *pid, BatchSize: *batch,
		PeerPID: *peerPID, Rate: *rate, CallbackTo: *receiver, NoCallback: *noHooks}
	for _, u := range strings.Split(*target, ",") {
		if u = strings.TrimRight(strings.TrimSpace(u), "/"); u != "" {
			opts.URLs = append(opts.URLs, u)
		}
	}
	if len(opts.URLs) > 0 {
		opts.URL = opts.URLs[0]
	}
	nodeArgs := strings.Fields(*extra)
	if *smscAddr != "" {
		nodeArgs = append(nodeArgs, "--smpp-addr", *smscAddr, "--smpp-system-id", *smscID, "--smpp-password", *smscPass)
	}
	var stop func()
	if opts.URL == "" {
		if *nodes > 1 && !strings.HasPrefix(*db, "postgres") {
			return errors.New("several nodes need --db postgres://…")
		}
		started, err := startBenchNodes(ctx, benchNodeSpec{db: *db, simDelay: *simDelay, keep: *keep, count: *nodes,
			extra: nodeArgs, exe: *nodeExe}, stderr)
		if err != nil {
			return err
		}
		stop = started.stop
		defer stop()
		opts.URL, opts.Key, opts.PIDs = started.urls[0], started.key, started.pids
		opts.URLs, opts.DB = started.urls, started.db
		if *noHooks {
			count, closeCount, err := finishedCounter(started.dsn)
			if err != nil {
				return err
			}
			defer closeCount()
			opts.Finished = count
		}
	} else if opts.Key == "" {
		return errors.New("--key is required with --url")
	} else if *noHooks {
		return errors.New("--no-callback works only with a node the bench starts (leave out --url)")
	}
	res, err := bench.Run(ctx, opts)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		printBench(stdout, res)
	}
	if res.Missing > 0 {
		return fmt.Errorf("%d accepted messages never got their final webhook", res.Missing)
	}
	return nil
}

func printBench(w io.Writer, r bench.Result) {
	fmt.Fprintf(w, "messages %d (%d requests, %d connections), accepted %d, refused %d\n", r.Messages, r.Requests, r.Concurrency, r.Accepted, r.Refused)
	fmt.Fprintf(w, "accepted sends/s      %.0f   (send phase %.2fs)\n", r.AcceptedPerSec, r.SendSeconds)
	fmt.Fprintf(w, "accept latency        p50 %.2f ms  p90 %.2f ms  p99 %.2f ms\n", r.AcceptP50ms, r.AcceptP90ms, r.AcceptP99ms)
	fmt.Fprintf(w, "end-to-end msgs/s     %.0f   (first send to last final webhook %.2fs)\n", r.EndToEndPerSec, r.EndToEndSeconds)
	fmt.Fprintf(w, "status latency        p50 %.1f ms  p99 %.1f ms\n", r.StatusP50ms, r.StatusP99ms)
	if r.ServiceCPUSecs > 0 {
		fmt.Fprintf(w, "service CPU           %.0f µs/message (%.2fs)\n", r.CPUMicrosPerMsg, r.ServiceCPUSecs)
		if r.DBCPUSecs > 0 {
			fmt.Fprintf(w, "database CPU          %.0f µs/message (%.2fs); service + database %.0f µs/message\n",
				r.DBCPUMicrosPerMsg, r.DBCPUSecs, r.TotalCPUMicrosPerMsg)
		}
		if r.PeerCPUMicrosPerMsg > 0 {
			fmt.Fprintf(w, "peer CPU              %.0f µs/message (not included above)\n", r.PeerCPUMicrosPerMsg)
		}
		if r.PeakRSSMiB > 0 {
			fmt.Fprintf(w, "service memory        peak %.0f MiB, now %.0f MiB\n", r.PeakRSSMiB, r.FinalRSSMiB)
		} else {
			fmt.Fprintf(w, "service memory        now %.0f MiB (from the nodes' metrics)\n", r.FinalRSSMiB)
		}
	}
	for _, m := range r.Memory {
		fmt.Fprintf(w, "memory at %-9d    peak %.0f MiB, now %.0f MiB\n", m.Messages, m.PeakRSSMiB, m.RSSMiB)
	}
	if l := r.Locks; l != nil {
		fmt.Fprintf(w, "database lock waits   %d of %d samples, at most %d sessions waiting\n", l.WithWaiters, l.Samples, l.MaxWaiters)
	}
	printWrites(w, r)
	fmt.Fprintf(w, "bench CPU             %.2fs\n", r.BenchCPUSecs)
	fmt.Fprintf(w, "webhooks %d, missing final events %d, duplicate events %d\n", r.Webhooks, r.Missing, r.Duplicates)
	if r.FirstErrorSample != "" {
		fmt.Fprintf(w, "first error: %s\n", r.FirstErrorSample)
	}
}

type benchNodes struct {
	dsn  string
	urls []string
	pids []int
	key  string
	db   bench.DBProbe // nil unless the database is a PostgreSQL on this machine
	stop func()
}

// benchNodeSpec says which nodes to start.
type benchNodeSpec struct {
	db       string
	simDelay time.Duration
	keep     bool
	count    int
	extra    []string
	exe      string // the binary; "" for this one
}

// startBenchNodes bootstraps an account with unlimited rate limits and a
// live key, then starts the nodes and waits until they are ready.
func startBenchNodes(ctx context.Context, spec benchNodeSpec, stderr io.Writer) (*benchNodes, error) {
	db, keep := spec.db, spec.keep
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
	var probe bench.DBProbe
	if db != "" {
		dsn, probe, err = freshSchema(ctx, db, keep, &cleanups)
		if err != nil {
			cleanup()
			return nil, err
		}
	}
	st, err := benchStore(ctx, dsn, spec.exe)
	if err != nil {
		cleanup()
		return nil, err
	}
	now := time.Now().UTC()
	a, err := CreateAccount(ctx, st, NewAccount{Name: "Bench", Tier: "enterprise", Credits: 100_000_000, Currency: "USD", Country: "55"}, now)
	if err == nil {
		err = st.SetLimits(ctx, a.ID, domain.Limits{})
	}
	var k string
	if err == nil {
		var key apikey.Key
		key, _, err = CreateKey(ctx, st, a.ID, "live", now)
		k = key.Secret
	}
	st.Close()
	if err != nil {
		cleanup()
		return nil, err
	}
	exe := spec.exe
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			cleanup()
			return nil, err
		}
	}
	out := &benchNodes{key: k, dsn: dsn, db: probe}
	for i := 0; i < spec.count; i++ {
		port, err := freePort()
		if err != nil {
			cleanup()
			return nil, err
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		args := append([]string{"dev", "--data", dir, "--db", dsn, "--addr", addr, "--node-id", fmt.Sprintf("bench-%d", i)}, spec.extra...)
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), "MSGSVC_SIMULATOR_DELAY="+spec.simDelay.String(), "MSGSVC_LOG_LEVEL=warn")
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
		out.urls = append(out.urls, base)
		out.pids = append(out.pids, cmd.Process.Pid)
	}
	out.stop = cleanup
	return out, nil
}

// finishedCounter counts the messages of a started node that reached a
// final status, reading its database directly: a run without callbacks
// has no webhooks to tell, and polling the API would add to the CPU
// measured.
func finishedCounter(dsn string) (func(ctx context.Context) (int, error), func(), error) {
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

// benchStore opens the run's database for the bootstrap. With another
// binary for the nodes, that binary migrates it, so the nodes run on the
// schema they were built with.
func benchStore(ctx context.Context, dsn, exe string) (*store.Store, error) {
	if exe == "" {
		return openStore(ctx, dsn)
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
func freshSchema(ctx context.Context, base string, keep bool, cleanups *[]func()) (string, bench.DBProbe, error) {
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

// printWrites prints what the run wrote per message, the largest tables first.
func printWrites(w io.Writer, r bench.Result) {
	if r.DiskBytesPerMsg > 0 {
		fmt.Fprintf(w, "service disk writes   %.0f bytes/message\n", r.DiskBytesPerMsg)
	}
	if r.RowWritesPerMsg == 0 {
		return
	}
	fmt.Fprintf(w, "database writes       %.2f rows/message, WAL %.0f bytes/message\n", r.RowWritesPerMsg, r.WALBytesPerMsg)
	tables := make([]string, 0, len(r.RowWritesByTable))
	for t := range r.RowWritesByTable {
		tables = append(tables, t)
	}
	sort.Slice(tables, func(i, j int) bool {
		a, b := r.RowWritesByTable[tables[i]], r.RowWritesByTable[tables[j]]
		return a > b || a == b && tables[i] < tables[j]
	})
	for _, t := range tables {
		fmt.Fprintf(w, "  %-19s %.2f rows/message\n", t, r.RowWritesByTable[t])
	}
}
