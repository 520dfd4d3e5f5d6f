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
	deadline := time.Now().Add(Within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
