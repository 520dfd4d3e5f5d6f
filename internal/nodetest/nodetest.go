// Package nodetest holds what the tests of the node (internal/app) and of
// the command line (internal/cli) both need around a running node: a
// buffer its goroutines write while the test reads it, and the store a
// command left behind, opened as the commands open it.
package nodetest

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/store"
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
