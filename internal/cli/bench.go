package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/bench"
	"github.com/msgsvc/msgsvc/internal/domain"
)

// runBench is `msgsvc bench`: against --url, or against a node it starts
// itself (this same binary, `dev` mode so live keys reach the simulator)
// on a temporary SQLite database or a fresh schema of --db postgres://….
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stdout, stderr, "msgsvc bench — load-test a node (one it starts, or --url) and report throughput, latency and CPU",
		"msgsvc bench --n 5000 --c 16   (the fraud guard's bench: msgsvc bench --fraud)")
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
		front    = fs.String("front", "native", "the API to send through: native, or twilio (the Twilio-compatible Messages.json, form posts with Basic auth, signed form callbacks)")
		twLogin  = fs.String("twilio-login", "", "for --url with --front twilio: ACCOUNT_SID:AUTH_TOKEN:FROM (an E.164 number of the account)")
		depth    = fs.Int("child-depth", 0, "started node: send as an account this many levels below a top-level reseller (at most 2: the tree is 3 deep), each send charged at every level")
		rate     = fs.Float64("rate", 0, "requests per second over all connections (0: as fast as they go), to load nodes equally in runs with different node counts")
		fraud    = fs.Bool("fraud", false, "the fraud guard's bench: an hour of five accounts' traffic with a pumping attack, through started nodes with the guard off, alerting and blocking (docs/benchmarks.md, \"Fraud guard\")")
		seed     = fs.Uint64("seed", 1, "with --fraud: the traffic's seed")
		rounds   = fs.Int("rounds", 3, "with --fraud: runs of each guard mode, in turns")
		modes    = fs.String("modes", "off,alert,block", "with --fraud: the guard modes each round runs (off, alert, block, hold)")
		hourIn   = fs.Duration("hour", 20*time.Second, "with --fraud: the wall time the traffic's hour is compressed into")
		alone    = fs.Bool("guard-alone", true, "with --fraud: also measure the guard's own CPU in process (the thread running its check, on SQLite)")
	)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *fraud {
		if *target != "" {
			return errors.New("--fraud starts its own nodes, one per run (leave out --url)")
		}
		conns := 8 // the bench's pace, not its connections, sets the load
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "c" {
				conns = *c
			}
		})
		res, err := bench.RunFraud(ctx, bench.FraudOptions{Seed: *seed, Rounds: *rounds, Modes: strings.Split(*modes, ","), Hour: *hourIn,
			C: conns, GuardAlone: *alone, DB: *db, Exe: *nodeExe, Extra: strings.Fields(*extra), Keep: *keep, Wait: *wait, Progress: stderr, Stderr: stderr})
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(res)
		}
		bench.PrintFraud(stdout, res)
		return nil
	}
	opts := bench.Options{Key: *key, N: *n, C: *c, Type: strings.ToUpper(*typ), Wait: *wait, PID: *pid, BatchSize: *batch,
		PeerPID: *peerPID, Rate: *rate, CallbackTo: *receiver, NoCallback: *noHooks, Front: *front}
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
	if *depth < 0 || *depth > domain.MaxDepth-1 {
		return fmt.Errorf("--child-depth must be 0 to %d", domain.MaxDepth-1)
	}
	if opts.URL == "" {
		if *nodes > 1 && !strings.HasPrefix(*db, "postgres") {
			return errors.New("several nodes need --db postgres://…")
		}
		started, err := bench.StartNodes(ctx, bench.NodeSpec{DB: *db, SimDelay: *simDelay, Keep: *keep, Count: *nodes,
			Extra: nodeArgs, Exe: *nodeExe, Front: *front, ChildDepth: *depth}, stderr)
		if err != nil {
			return err
		}
		defer started.Stop()
		opts.URL, opts.Key, opts.PIDs = started.URLs[0], started.Key, started.PIDs
		opts.URLs, opts.DB, opts.Twilio = started.URLs, started.DB, started.Twilio
		if *noHooks {
			count, closeCount, err := bench.FinishedCounter(started.DSN)
			if err != nil {
				return err
			}
			defer closeCount()
			opts.Finished = count
		}
	} else if *front == bench.FrontTwilio {
		parts := strings.SplitN(*twLogin, ":", 3)
		if len(parts) != 3 {
			return errors.New("--twilio-login ACCOUNT_SID:AUTH_TOKEN:FROM is required with --url and --front twilio")
		}
		opts.Twilio = bench.TwilioLogin{AccountSid: parts[0], AuthToken: parts[1], From: parts[2]}
		if *noHooks {
			return errors.New("--no-callback works only with a node the bench starts (leave out --url)")
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
		bench.Print(stdout, res)
	}
	if res.Missing > 0 {
		return fmt.Errorf("%d accepted messages never got their final webhook", res.Missing)
	}
	return nil
}
