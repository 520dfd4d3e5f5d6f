// Package fieldtest holds the check that the channels' table tests make of
// the problems a Check returns.
package fieldtest

import (
	"fmt"
	"testing"

	"github.com/msgsvc/msgsvc/internal/channel/field"
)

// Want fails the test unless problems is empty (want "") or names the
// field want among them.
func Want(t testing.TB, problems []field.Problem, want string) {
	t.Helper()
	if want == "" {
		if len(problems) > 0 {
			t.Fatalf("refused: %+v", problems)
		}
		return
	}
	for _, p := range problems {
		if p.Field == want {
			return
		}
	}
	t.Fatalf("no problem for %s: %+v", want, problems)
}

// Replies returns n valid reply buttons, titled and answered apart.
func Replies(n int) []field.Button {
	out := make([]field.Button, n)
	for i := range out {
		out[i] = field.Button{Type: "reply", Title: fmt.Sprintf("B%d", i), Payload: fmt.Sprintf("p%d", i)}
	}
	return out
}
