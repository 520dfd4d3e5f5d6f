package message

import (
	"context"
	"errors"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// A send whose caller was read from a cache at an auth counter that has
// moved since is refused with ErrStaleAuth and writes nothing; at the
// current counter it goes through.
func TestSendChecksTheCallersAuthVersion(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, fakeRoutes{domain.SMS: "smsc"})
	v, err := f.st.AuthVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stale := f.caller
	stale.AuthVersion = v - 1
	if v-1 == 0 {
		stale.AuthVersion = v + 1
	}
	d := Draft{To: "5511999990010", Text: "hi", Type: "SMS"}
	if _, err := f.svc.Send(ctx, stale, d, SendOptions{}); !errors.Is(err, ErrStaleAuth) {
		t.Fatalf("send at a moved counter: %v, want ErrStaleAuth", err)
	}
	msgs, err := f.st.SearchMessages(ctx, domain.MessageFilter{AccountID: f.caller.Account.ID})
	if err != nil || len(msgs) != 0 {
		t.Fatalf("%d messages (%v) after the refused send, want none", len(msgs), err)
	}
	current := f.caller
	current.AuthVersion = v
	if _, err := f.svc.Send(ctx, current, d, SendOptions{}); err != nil {
		t.Fatalf("send at the current counter: %v", err)
	}
}
