// Package fieldtest holds the check that the channels' table tests make of
// the problems a Check returns.
package fieldtest

import (
	"fmt"
	"strings"
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

// Shared are the limits of the rules that every rich channel applies
// alike: a text of at most Text characters, 1 to Buttons buttons when any
// are given, and button titles of at most Title characters.
type Shared struct{ Text, Buttons, Title int }

// CheckShared runs the cases of the shared rules at and past l's limits
// through check, which makes and checks the channel's message of a text
// and its buttons (nil: not given).
func CheckShared(t *testing.T, l Shared, check func(text string, buttons []field.Button) []field.Problem) {
	reply := func(title string) []field.Button { return []field.Button{{Type: "reply", Title: title, Payload: "p"}} }
	type message struct {
		text    string
		buttons []field.Button
	}
	c := C[message]
	Run(t, func(m message) []field.Problem { return check(m.text, m.buttons) }, []Case[message]{
		c("text at limit", message{strings.Repeat("ü", l.Text), nil}, ""),
		c("text over", message{strings.Repeat("ü", l.Text+1), nil}, "message"),
		c("buttons at limit", message{"t", Replies(l.Buttons)}, ""),
		c("buttons over", message{"t", Replies(l.Buttons + 1)}, "buttons"),
		c("no buttons", message{"t", []field.Button{}}, "buttons"),
		c("title at limit", message{"t", reply(strings.Repeat("é", l.Title))}, ""),
		c("title over", message{"t", reply(strings.Repeat("é", l.Title+1))}, "buttons[0].title"),
		c("blank title", message{"t", reply(" ")}, "buttons[0].title"),
	})
}

// Case is a message of a channel's table test and the field whose
// problem its check must report: "" when the message is valid.
type Case[M any] struct {
	name  string
	m     M
	field string
}

// C is the case name: m, whose check reports a problem of field.
func C[M any](name string, m M, field string) Case[M] { return Case[M]{name, m, field} }

// Run checks each case's message with check, as a subtest of its name.
func Run[M any](t *testing.T, check func(M) []field.Problem, cases []Case[M]) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { Want(t, check(c.m), c.field) })
	}
}
