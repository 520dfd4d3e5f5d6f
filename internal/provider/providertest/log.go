package providertest

import (
	"bytes"
	"sync"
)

// Log keeps what an adapter logs in a test. The adapter's goroutines write
// to it while the test reads it, so both go through one lock. The zero
// value is ready.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p (io.Writer, for a slog handler).
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String is everything logged so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
