package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pgBinEnv names the directory of the PostgreSQL server binaries (initdb,
// pg_ctl, postgres) the database-restart test starts its own cluster with.
const pgBinEnv = "MSGSVC_TEST_PG_BINDIR"

// fixedPort picks a free loopback port for a peer that a test stops and
// starts again on the same address. It is taken below the kernel's
// ephemeral range (32768 and up on Linux), from which ":0" listeners and
// outgoing connections draw, so nothing else is likely to take it while
// the peer is down.
func fixedPort(t *testing.T) int {
	t.Helper()
	for range 100 {
		port := 20000 + rand.IntN(12000)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			ln.Close()
			return port
		}
	}
	t.Fatal("no free port between 20000 and 32000")
	return 0
}

// pgCluster is a private PostgreSQL cluster in a temporary directory, on
// its own port and socket directory. Tests stop and restart it at will; the
// machine's shared PostgreSQL is never touched.
type pgCluster struct {
	t    *testing.T
	bin  string
	dir  string // the cluster's own directory: data, socket, log
	port int
	// as is the user the server runs as: initdb and postgres refuse to run
	// as root, so a test run by root runs them as "postgres".
	as string
}

// peerBinary is the path the variable name gives (what it is, e.g. the
// server's binary); the test is skipped when it is unset. peer names what
// the test starts from it.
func peerBinary(t *testing.T, name, what, peer string) string {
	t.Helper()
	bin := os.Getenv(name)
	if bin == "" {
		t.Skipf("set %s to %s to run this test; it starts a private %s and never touches the shared one", name, what, peer)
	}
	return bin
}

// startPGCluster makes and starts a cluster with trust authentication for
// the user postgres on 127.0.0.1. It skips when pgBinEnv is unset and
// fails when the binaries it names are not there.
func startPGCluster(t *testing.T) *pgCluster {
	t.Helper()
	bin := peerBinary(t, pgBinEnv, "the PostgreSQL server binaries (e.g. /usr/lib/postgresql/15/bin)", "cluster")
	for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			t.Fatalf("%s=%s: %v", pgBinEnv, bin, err)
		}
	}
	// Not t.TempDir: its parent is private to the test's user, and the
	// server may run as another.
	dir, err := os.MkdirTemp("", "msgsvc-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c := &pgCluster{t: t, bin: bin, dir: dir}
	t.Cleanup(func() {
		_, _ = c.ctl("stop", "-w", "-m", "immediate")
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		c.as = "postgres"
		u, err := user.Lookup(c.as)
		if err != nil {
			t.Fatalf("running as root, the cluster needs the user %q: %v", c.as, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := c.run("initdb", "-D", c.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C",
		"--no-sync", "--no-instructions"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	c.port = fixedPort(t)
	c.start()
	return c
}

func (c *pgCluster) data() string { return filepath.Join(c.dir, "data") }

// DSN is the URL of the cluster's database "postgres".
func (c *pgCluster) DSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// start starts the server and waits until it accepts connections.
func (c *pgCluster) start() {
	c.t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=100", c.port, c.dir)
	if out, err := c.ctl("start", "-w", "-t", "60", "-l", filepath.Join(c.dir, "server.log"), "-o", opts); err != nil {
		c.t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, c.logTail())
	}
}

// stop stops the server: mode "fast" ends every session and shuts down
// cleanly, "immediate" quits at once, as a crash would, and the next start
// recovers from the write-ahead log.
func (c *pgCluster) stop(mode string) {
	c.t.Helper()
	if out, err := c.ctl("stop", "-w", "-t", "60", "-m", mode); err != nil {
		c.t.Fatalf("pg_ctl stop -m %s: %v\n%s", mode, err, out)
	}
}

func (c *pgCluster) ctl(args ...string) ([]byte, error) {
	return c.run("pg_ctl", append([]string{"-D", c.data()}, args...)...)
}

// run runs one of the server binaries as the cluster's user.
func (c *pgCluster) run(name string, args ...string) ([]byte, error) {
	path := filepath.Join(c.bin, name)
	cmd := exec.Command(path, args...)
	if c.as != "" {
		cmd = exec.Command("runuser", append([]string{"-u", c.as, "--", path}, args...)...)
	}
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// pg_ctl start leaves the server running with our output pipes open
	// unless they are files; a buffer is fine because -l sends the
	// server's own output to its log, and WaitDelay bounds the rest.
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	return out.Bytes(), err
}

func (c *pgCluster) logTail() string {
	b, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

// redisServerEnv names the redis-server binary the Redis-outage test
// starts its own server with.
const redisServerEnv = "MSGSVC_TEST_REDIS_SERVER"

// redisPeer is a private redis-server on its own port, without
// persistence; the machine's shared Redis is never touched.
type redisPeer struct {
	t    *testing.T
	bin  string
	dir  string
	port int

	cmd    *exec.Cmd
	exited chan struct{}
}

// startRedisPeer starts a server; it skips when redisServerEnv is unset.
func startRedisPeer(t *testing.T) *redisPeer {
	t.Helper()
	bin := peerBinary(t, redisServerEnv, "a redis-server binary (e.g. /usr/bin/redis-server)", "server")
	r := &redisPeer{t: t, bin: bin, dir: t.TempDir(), port: fixedPort(t)}
	t.Cleanup(func() {
		if r.running() {
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
	})
	r.start()
	return r
}

// URL is the backend URL msgsvc takes.
func (r *redisPeer) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

// start runs the server and waits until it answers PING.
func (r *redisPeer) start() {
	r.t.Helper()
	cmd := exec.Command(r.bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", r.dir, "--logfile", filepath.Join(r.dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("start redis-server: %v", err)
	}
	r.cmd, r.exited = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(r.exited) }()
	deadline := time.Now().Add(20 * time.Second)
	for !r.pong() {
		if !r.running() || time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(r.dir, "redis.log"))
			r.t.Fatalf("redis-server on port %d did not answer PING:\n%s", r.port, b)
		}
		time.Sleep(20 * time.Millisecond) // polling for the server to listen
	}
}

func (r *redisPeer) running() bool {
	if r.exited == nil {
		return false
	}
	select {
	case <-r.exited:
		return false
	default:
		return true
	}
}

// pong reports whether the server answers PING.
func (r *redisPeer) pong() bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", r.port), time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 7)
	n, _ := c.Read(buf)
	return string(buf[:n]) == "+PONG\r\n"
}

// signal sends sig to the server: SIGKILL to take it away, SIGSTOP to
// make it hang (connections are accepted by the kernel, nothing is
// answered), SIGCONT to wake it.
func (r *redisPeer) signal(sig os.Signal) {
	r.t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		r.t.Fatalf("redis-server %v: %v", sig, err)
	}
}

// kill takes the server away and waits until it is gone.
func (r *redisPeer) kill() {
	r.t.Helper()
	r.signal(os.Kill)
	select {
	case <-r.exited:
	case <-time.After(10 * time.Second):
		r.t.Fatal("redis-server still running 10 s after SIGKILL")
	}
}
