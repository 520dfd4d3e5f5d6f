// Package polltest waits in tests for what other goroutines bring about,
// by polling a condition until a deadline rather than sleeping a guess.
package polltest

import (
	"testing"
	"time"
)

// Within is how long Until waits: long enough for a loaded machine, short
// enough that a condition that never holds fails the test soon.
const Within = 10 * time.Second

// Until returns once cond holds, checking it every millisecond; after
// Within it fails the test, saying what it waited for.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	poll(t, what, Within, time.Millisecond, cond)
}

// For returns once cond holds, checking it every 20 milliseconds: for the
// conditions that cost a request or a query to check, with a deadline the
// caller names because a node's work takes longer than Within on some
// paths. After timeout it fails the test, saying what it waited for.
func For(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	poll(t, what, timeout, 20*time.Millisecond, cond)
}

func poll(t testing.TB, what string, timeout, every time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(every)
	}
}
