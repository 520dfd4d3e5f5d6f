package smppserver

import (
	"testing"
	"time"

	smpp "github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/smppserver/esmetest"
)

// suspend sets an account's suspension, moving the version as the store's
// triggers do; a zero at resumes it.
func (f *fakeUsers) suspend(accountID string, at time.Time) {
	f.mu.Lock()
	a := f.accts[accountID]
	a.SuspendedAt, a.SuspendedBy = at, ""
	if !at.IsZero() {
		a.SuspendedBy = "acc_parent"
	}
	f.accts[accountID] = a
	f.version++
	f.mu.Unlock()
}

// TestSuspendedAccountBinds: suspending an account closes its open binds
// within a poll and refuses new ones with ESME_RBINDFAIL, however often
// they are tried; another account's bind stays open; once resumed, it
// binds again.
func TestSuspendedAccountBinds(t *testing.T) {
	f := start(t, nil)
	mine := f.bound(t, smpp.BindTransceiver, "acme")
	theirs := f.bound(t, smpp.BindTransceiver, "other")
	f.users.suspend("acc_a", time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	if !closedSoon(mine) {
		t.Fatal("the bind of a suspended account stays open")
	}
	for i := range 5 { // past BindFailuresPerMinute: the refusal is the same each time
		if st := esmetest.Dial(t, f.addr, nil).Bind(smpp.BindTransmitter, "acme", f.pw); st != smpp.StatusBindFail {
			t.Fatalf("bind %d of a suspended account: %s", i, st)
		}
	}
	if p := theirs.Call(smpp.EnquireLink, nil); p.Status != smpp.StatusOK {
		t.Fatalf("another account's bind: %s", p.Status)
	}
	if n := f.sender.count(); n != 0 {
		t.Fatalf("%d sends", n)
	}
	f.users.suspend("acc_a", time.Time{})
	f.bound(t, smpp.BindTransmitter, "acme")
}

// TestSuspensionBitesAtTheNextSubmit: a suspension made on another node
// bites at the bind's next submit_sm, before anything is sent.
func TestSuspensionBitesAtTheNextSubmit(t *testing.T) {
	f := start(t, func(c *Config) { c.Poll = time.Hour })
	e := f.bound(t, smpp.BindTransceiver, "acme")
	f.users.suspend("acc_a", time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	e.Send(smpp.SubmitSM, &smpp.SM{DestTON: smpp.TONInternational, DestNPI: smpp.NPIISDN, DestAddr: "5511999990000",
		ShortMessage: []byte("after")})
	if p, err := e.Read(); err == nil && (p.Command != smpp.SubmitSMResp || p.Status != smpp.StatusSubmitFail) {
		t.Fatalf("submit after the suspension: %s %s", p.Command, p.Status)
	}
	if n := f.sender.count(); n != 0 {
		t.Fatalf("%d sends after the suspension", n)
	}
	if !closedSoon(e) {
		t.Fatal("the bind of a suspended account stays open")
	}
}
