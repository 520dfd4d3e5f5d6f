package message

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// A part with a UDH is charged one segment, so it must fit one: at most
// 140 octets of user data with its header, whatever front it came from.
// One octet more is refused and nothing is stored or charged.
func TestUDHPartMustFitOneSegment(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, fakeRoutes{domain.SMS: "smsc"})
	udh := "050003070201" // six octets: a concatenation IE, part 1 of 2
	refused := []struct{ name, text, udh string }{
		{"GSM-7 past 153 septets", strings.Repeat("a", 154), udh},
		{"1,524 characters", strings.Repeat("a", 1524), udh},
		{"UCS-2 past 67 units", strings.Repeat("я", 68), udh},
		{"a header that is not hex", "hi", "05000307020"},
		{"a header whose length octet disagrees", "hi", "0600030702"},
	}
	for _, c := range refused {
		_, err := f.svc.Send(ctx, f.caller, Draft{Type: "SMS", To: "5511999990010", Text: c.text, UDH: c.udh}, SendOptions{})
		var verr *domain.ValidationError
		if !errors.As(err, &verr) || len(verr.Fields) != 1 || verr.Fields[0].Path != "udh" {
			t.Fatalf("%s: %v, want a validation error on udh", c.name, err)
		}
	}
	if list, _ := f.st.Ledger(ctx, f.caller.Account.ID, "", 100); len(list) != 1 {
		t.Fatalf("%d ledger entries after the refusals, want only the top-up", len(list))
	}
	for _, text := range []string{strings.Repeat("a", 153), strings.Repeat("я", 67)} {
		mid := f.send(t, Draft{Type: "SMS", To: "5511999990010", Text: text, UDH: udh})
		m, err := f.st.Message(ctx, f.caller.Account.ID, f.caller.Key.Env, mid)
		if err != nil {
			t.Fatal(err)
		}
		if m.Segments != 1 || m.Content.UDH != udh {
			t.Fatalf("a 140-octet part: %d segments, header %q", m.Segments, m.Content.UDH)
		}
	}
}
