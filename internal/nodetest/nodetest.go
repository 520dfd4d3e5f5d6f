// Package nodetest holds what the tests of the node (internal/app) and of
// the command line (internal/cli) both need around a running node: a
// buffer its goroutines write while the test reads it (which the SMPP
// server's tests use for their logs too), and the store a command left
// behind, opened as the commands open it.
package nodetest

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// Buffer is a bytes.Buffer safe for a node's concurrent writers (its logs,
// a command's output) while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// OpenStore opens the database at dsn as the commands do, closed when the
// test ends.
func OpenStore(t testing.TB, dsn string) *store.Store {
	t.Helper()
	st, err := bootstrap.OpenStore(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// DevConfig is a dev node on a SQLite file in dir, on a free loopback
// port, whose simulator answers after simulatorDelay and whose webhooks
// retry soon, quiet but for errors.
func DevConfig(dir, nodeID string, simulatorDelay time.Duration) config.Config {
	return config.Config{Dev: true, DB: filepath.Join(dir, "msgsvc.db"), DataDir: dir, Addr: "127.0.0.1:0",
		WebhookAllowPrivate: true, SimulatorDelay: simulatorDelay, WebhookRetrySchedule: webhook.Schedule{50 * time.Millisecond},
		RateLimitBackend: "memory", NodeID: nodeID, DispatchWorkers: 2, ShutdownTimeout: 5 * time.Second, LogLevel: "error"}
}

// Run runs a node until the test ends, and reports its stop's error as
// the test's.
func Run(t testing.TB, name string, run func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s stopped with %v", name, err)
		}
	})
}
