// Package ratelimittest reads the rate-limit headers of an answer the way
// the tests of the fronts assert them (for tests only).
package ratelimittest

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// Headers is both header families of an answer, as
// "tierRemaining/tierLimit@reset type typeRemaining/typeLimit@reset"; an
// answer without one of them fails the test.
func Headers(t testing.TB, status int, h http.Header) string {
	t.Helper()
	names := []string{"X-RateLimit-Remaining", "X-RateLimit-Limit", "X-RateLimit-Reset",
		"RateLimit-Remaining", "RateLimit-Limit", "RateLimit-Reset"}
	v := make([]any, len(names))
	for i, n := range names {
		if v[i] = h.Get(n); v[i] == "" {
			t.Fatalf("%d response without %s: %v", status, n, h)
		}
	}
	return fmt.Sprintf("%s/%s@%s type %s/%s@%s", v...)
}

// Windows is what Headers reads for the given windows.
func Windows(tierRem, tierLim, typeRem, typeLim int, reset time.Time) string {
	return fmt.Sprintf("%d/%d@%d type %d/%d@%d", tierRem, tierLim, reset.Unix(), typeRem, typeLim, reset.Unix())
}
