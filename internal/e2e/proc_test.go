package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binEnv names a prebuilt msgsvc binary to use instead of building one.
const binEnv = "MSGSVC_E2E_BIN"

// msgsvcBin is the binary under test. TestMain sets it once before any test
// runs; tests only read it. It stays empty in -short mode, where the
// end-to-end tests skip.
var msgsvcBin string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if bin := os.Getenv(binEnv); bin != "" {
		msgsvcBin = bin
		return m.Run()
	}
	if testing.Short() {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "msgsvc-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := buildBinary(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	msgsvcBin = bin
	return m.Run()
}

// buildBinary builds ./cmd/msgsvc into dir. go test puts its own go first
// on PATH, so this uses the toolchain the tests run with.
func buildBinary(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, "msgsvc")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "github.com/msgsvc/msgsvc/cmd/msgsvc")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build msgsvc: %w\n%s", err, b)
	}
	return out, nil
}

// needBinary skips end-to-end tests in -short mode.
func needBinary(t testing.TB) string {
	t.Helper()
	if msgsvcBin == "" {
		t.Skip("end-to-end test: skipped in -short mode")
	}
	return msgsvcBin
}

// childEnv is the environment for msgsvc processes: the test's own without
// any MSGSVC_* setting (so a developer's shell cannot change the run),
// plus extra.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MSGSVC_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// runCLI runs one msgsvc command and returns its standard output.
func runCLI(ctx context.Context, t testing.TB, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, needBinary(t), args...)
	cmd.Env = childEnv()
	// A command that hangs is asked for its goroutine dump (SIGQUIT makes
	// the Go runtime print one) before it is killed.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("msgsvc %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// account is what bootstrap creates: an account with unlimited rate
// limits and one API key.
type account struct {
	ID            string
	WebhookSecret string
	Key           string
}

// bootstrap creates the database (migrate), an enterprise account with
// unlimited limits and a key of env ("test" or "live") through the command
// line, as an operator would.
func bootstrap(ctx context.Context, t testing.TB, dsn, env string) account {
	t.Helper()
	var acc struct {
		ID            string `json:"id"`
		WebhookSecret string `json:"webhookSecret"`
	}
	runCLI(ctx, t, "migrate", "--db", dsn) // the other commands never create a database
	out := runCLI(ctx, t, "account", "create", "--db", dsn, "--name", "e2e "+t.Name(), "--tier", "enterprise",
		"--credits", "100000", "--json")
	if err := json.Unmarshal(out, &acc); err != nil || acc.ID == "" || !strings.HasPrefix(acc.WebhookSecret, "whsec_") {
		t.Fatalf("account create printed %q (%v)", out, err)
	}
	runCLI(ctx, t, "account", "limits", "--db", dsn, "--account", acc.ID, "--tier-rpm", "0", "--send-rpm", "0",
		"--status-rpm", "0", "--json")
	var key struct {
		Key string `json:"key"`
	}
	out = runCLI(ctx, t, "key", "create", "--db", dsn, "--account", acc.ID, "--env", env, "--json")
	if err := json.Unmarshal(out, &key); err != nil || !strings.HasPrefix(key.Key, "svc_"+env+"_") {
		t.Fatalf("key create printed %q (%v)", out, err)
	}
	return account{ID: acc.ID, WebhookSecret: acc.WebhookSecret, Key: key.Key}
}

// server is one running "msgsvc serve" process.
type server struct {
	Addr    string // host:port it listens on
	URL     string // http://Addr
	cmd     *exec.Cmd
	logs    *logSink
	exited  chan struct{}
	waitErr error // set before exited closes
}

// startServer starts "msgsvc serve" on dsn, with dataDir as its data
// directory (media; never the working directory), at a free loopback port
// and with extra environment settings, and waits until it listens. The
// process is killed when the test ends if it is still running.
func startServer(ctx context.Context, t testing.TB, dsn, dataDir string, env ...string) *server {
	t.Helper()
	return startCommand(ctx, t, "serve", dsn, dataDir, env...)
}

// startDev is startServer for "msgsvc dev", which routes live keys to the
// simulator: the tests that check what live traffic costs use it.
func startDev(ctx context.Context, t testing.TB, dsn, dataDir string, env ...string) *server {
	t.Helper()
	return startCommand(ctx, t, "dev", dsn, dataDir, env...)
}

func startCommand(ctx context.Context, t testing.TB, command, dsn, dataDir string, env ...string) *server {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "serve.log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	sink := &logSink{file: f, addr: make(chan string, 1)}
	cmd := exec.Command(needBinary(t), command, "--db", dsn, "--data", dataDir, "--addr", "127.0.0.1:0")
	cmd.Env = childEnv(env...)
	cmd.Stdout = io.Discard
	cmd.Stderr = sink
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start msgsvc serve: %v", err)
	}
	s := &server{cmd: cmd, logs: sink, exited: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		f.Close()
		close(s.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			_ = cmd.Process.Kill()
			<-s.exited
		}
		if t.Failed() {
			t.Logf("msgsvc pid %d log tail:\n%s", cmd.Process.Pid, sink.tail(60))
		}
	})
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case s.Addr = <-sink.addr:
	case <-s.exited:
		t.Fatalf("msgsvc %s exited before listening (%v):\n%s", command, s.waitErr, sink.tail(40))
	case <-wait.Done():
		t.Fatalf("msgsvc %s did not log \"msgsvc listening\" in time:\n%s", command, sink.tail(40))
	}
	s.URL = "http://" + s.Addr
	return s
}

// Kill ends the process with SIGKILL, as a crash or an OOM kill would, and
// waits until it is gone.
func (s *server) Kill(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill msgsvc: %v", err)
	}
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("msgsvc still running 10 s after SIGKILL")
	}
}

// Stop sends SIGTERM and returns the exit code, or fails the test when
// the process has not exited within timeout.
func (s *server) Stop(t testing.TB, timeout time.Duration) int {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM msgsvc: %v", err)
	}
	select {
	case <-s.exited:
		return s.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
	}
	// Ask for a goroutine dump to show what blocked the shutdown.
	_ = s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
	}
	t.Fatalf("msgsvc did not exit within %v of SIGTERM:\n%s", timeout, s.logs.tail(400))
	return -1
}

// Logs returns the lines the process has logged so far.
func (s *server) Logs() []string { return s.logs.lines() }

// logSink receives a process's standard error: it keeps every line (in a
// file, for post-mortems, and in memory, for assertions) and reports the
// address of the "msgsvc listening" line.
type logSink struct {
	file *os.File
	addr chan string

	mu      sync.Mutex
	partial []byte
	all     []string
	found   bool
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.file.Write(p)
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := string(l.partial[:i])
		l.partial = l.partial[i+1:]
		l.all = append(l.all, line)
		if !l.found {
			if addr := listeningAddr(line); addr != "" {
				l.found = true
				l.addr <- addr
			}
		}
	}
	return len(p), nil
}

// textListening is the line "msgsvc listening" in dev's text log format.
var textListening = regexp.MustCompile(`msg="msgsvc listening" addr=(\S+)`)

// listeningAddr reads the address from the "msgsvc listening" line, logged
// as JSON by serve and as text by dev; "" for any other line.
func listeningAddr(line string) string {
	var rec struct {
		Msg  string `json:"msg"`
		Addr string `json:"addr"`
	}
	if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "msgsvc listening" {
		return rec.Addr
	}
	if m := textListening.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return ""
}

func (l *logSink) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.all...)
}

func (l *logSink) tail(n int) string {
	all := l.lines()
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return strings.Join(all, "\n")
}
