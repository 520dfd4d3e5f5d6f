package smppserver

import (
	"slices"
	"testing"
	"time"

	smpp "github.com/msgsvc/msgsvc/internal/pdu"
)

// TestSubmitsReadNoCounter: while nothing changes, a bind's submit_sm
// reads no settings counter of its own; each send carries the counter the
// bind's account was read at, for its transaction to check.
func TestSubmitsReadNoCounter(t *testing.T) {
	f := start(t, func(c *Config) { c.Poll = time.Hour })
	e := f.bound(t, smpp.BindTransceiver, "acme")
	f.users.mu.Lock()
	before, v := f.users.reads, f.users.version
	f.users.mu.Unlock()
	for i := range 5 {
		if p := e.Submit("", "5511999990000", "hi", 0); p.Status != smpp.StatusOK {
			t.Fatalf("submit %d: %s", i, p.Status)
		}
	}
	f.users.mu.Lock()
	reads := f.users.reads - before
	f.users.mu.Unlock()
	if reads != 0 {
		t.Fatalf("%d reads of the counter for 5 submits", reads)
	}
	f.sender.mu.Lock()
	defer f.sender.mu.Unlock()
	for i, c := range f.sender.callers {
		if c.AuthVersion != v {
			t.Fatalf("send %d carries counter %d, want %d", i, c.AuthVersion, v)
		}
	}
}

// TestChangedAccountReadAtTheNextSubmit: an account changed on another
// node (the counter moved, no poll yet) reaches the bind's next submit_sm:
// the send made with the account as the bind had it is refused as stale
// and made again with the account as it is now, once, and the submits
// after it carry the new counter.
func TestChangedAccountReadAtTheNextSubmit(t *testing.T) {
	f := start(t, func(c *Config) { c.Poll = time.Hour })
	e := f.bound(t, smpp.BindTransceiver, "acme")
	f.users.allow("acc_a", "127.0.0.1") // still admits the bind
	for i := range 3 {
		if p := e.Submit("", "5511999990000", "hi", 0); p.Status != smpp.StatusOK {
			t.Fatalf("submit %d after the change: %s", i, p.Status)
		}
	}
	f.users.mu.Lock()
	v := f.users.version
	f.users.mu.Unlock()
	f.sender.mu.Lock()
	defer f.sender.mu.Unlock()
	if f.sender.stale != 1 || len(f.sender.callers) != 3 {
		t.Fatalf("%d stale sends, %d sent: want 1 and 3", f.sender.stale, len(f.sender.callers))
	}
	for i, c := range f.sender.callers {
		if !slices.Equal(c.Account.IPAllowlist, []string{"127.0.0.1"}) {
			t.Fatalf("send %d made with the allow-list %v", i, c.Account.IPAllowlist)
		}
		if i > 0 && c.AuthVersion != v {
			t.Fatalf("send %d carries counter %d, want %d", i, c.AuthVersion, v)
		}
	}
}
