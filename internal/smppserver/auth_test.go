package smppserver

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/nodetest"
	smpp "github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
	"github.com/msgsvc/msgsvc/internal/smppserver/esmetest"
	"github.com/msgsvc/msgsvc/internal/user"
)

// countingVerify stands for the password check: it counts the checks made
// and the most running at once, and each waits until hold is closed.
type countingVerify struct {
	calls atomic.Int64
	overlap
	hold chan struct{}
}

func (v *countingVerify) verify(hash, pw string) (bool, error) {
	v.calls.Add(1)
	defer v.enter()()
	if v.hold != nil {
		<-v.hold
	}
	return user.VerifyPassword(hash, pw)
}

// countingGuard counts the bind attempts counted per key kind.
type countingGuard struct {
	Guard
	users atomic.Int64
}

func (g *countingGuard) Count(ctx context.Context, key string, limit int) (ratelimit.Decision, error) {
	if strings.HasPrefix(key, "smpp-user:") {
		g.users.Add(1)
	}
	return g.Guard.Count(ctx, key, limit)
}

// rawBind binds over a connection of its own, off the test's goroutine.
func rawBind(addr, sys, pw string) (smpp.Status, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	b, err := smpp.Encode(smpp.PDU{Command: smpp.BindTransmitter, Seq: 1, Body: &smpp.Bind{SystemID: sys, Password: pw,
		InterfaceVersion: smpp.InterfaceVersion}})
	if err != nil {
		return 0, err
	}
	if _, err := c.Write(b); err != nil {
		return 0, err
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	p, err := smpp.ReadPDU(c)
	return p.Status, err
}

// Concurrent wrong binds never run more password checks at once than the
// hashing slots allow, and every one is counted before its check.
func TestBindHashesTakeTheSlots(t *testing.T) {
	const slots, binds = 2, 40
	v := &countingVerify{hold: make(chan struct{})}
	fixed := time.Date(2026, 3, 1, 12, 0, 1, 0, time.UTC)
	g := &countingGuard{Guard: ratelimit.NewMemory(func() time.Time { return fixed })}
	f := start(t, func(c *Config) {
		c.Slots, c.Verify, c.Guard = user.NewSlots(slots), v.verify, g
		c.BindFailuresPerMinute, c.MaxUnboundPerAddr = 1000, 1000
	})
	var wg sync.WaitGroup
	errs := make(chan error, binds)
	for i := range binds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := rawBind(f.addr, "acme", fmt.Sprintf("wrong%d", i))
			if err == nil && st != smpp.StatusBindFail {
				err = fmt.Errorf("wrong password: %s", st)
			}
			errs <- err
		}()
	}
	// Every attempt is past its count, and the slots are taken.
	waitUntil(t, func() bool { return g.users.Load() == binds && v.busy.Load() == slots })
	close(v.hold)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if m := v.most.Load(); m > slots {
		t.Fatalf("%d password checks ran at once with %d slots", m, slots)
	}
	if n := v.calls.Load(); n != binds {
		t.Fatalf("%d checks for %d binds", n, binds)
	}
}

// A throttled address, or a throttled system_id on any address, is refused
// ESME_RBINDFAIL without a password check; a user that bound from an
// address before still binds there.
func TestThrottledBindHashesNothing(t *testing.T) {
	v := &countingVerify{}
	f := start(t, func(c *Config) { c.Verify = v.verify })
	// acme binds from 127.0.0.1: it is known there from now on.
	f.bound(t, smpp.BindTransmitter, "acme").Close()

	// The address 127.0.0.2 spends its budget of 3 on wrong passwords.
	e := esmetest.DialFrom(t, f.addr, "127.0.0.2")
	for i := 0; i < 3; i++ {
		if st := e.Bind(smpp.BindTransmitter, "nobody", "wrong"); st != smpp.StatusBindFail {
			t.Fatalf("wrong bind: %s", st)
		}
	}
	before := v.calls.Load()
	if st := e.Bind(smpp.BindTransmitter, "other", f.pw); st != smpp.StatusBindFail {
		t.Fatalf("a right password from a throttled address: %s", st)
	}
	if n := v.calls.Load() - before; n != 0 {
		t.Fatalf("a throttled address's bind ran %d password checks", n)
	}

	// other's system_id is tried from three addresses: its own budget is
	// spent across them, and a fourth address is refused without a check.
	for i, from := range []string{"127.0.0.3", "127.0.0.4", "127.0.0.5"} {
		if st := esmetest.DialFrom(t, f.addr, from).Bind(smpp.BindTransmitter, "other", "wrong"); st != smpp.StatusBindFail {
			t.Fatalf("wrong bind %d: %s", i, st)
		}
	}
	before = v.calls.Load()
	if st := esmetest.DialFrom(t, f.addr, "127.0.0.6").Bind(smpp.BindTransmitter, "other", f.pw); st != smpp.StatusBindFail {
		t.Fatalf("a throttled system_id from a fresh address: %s", st)
	}
	if n := v.calls.Load() - before; n != 0 {
		t.Fatalf("a throttled system_id's bind ran %d password checks", n)
	}
	if st := esmetest.Dial(t, f.addr, nil).Bind(smpp.BindTransmitter, "acme", f.pw); st != smpp.StatusOK {
		t.Fatalf("acme from the address it bound from before: %s", st)
	}
}

// An address may hold only so many connections that have not bound: more
// are closed at once; a bind frees its connection's place.
func TestUnboundConnectionsPerAddress(t *testing.T) {
	f := start(t, func(c *Config) { c.MaxUnboundPerAddr = 3 })
	var open []*esmetest.ESME
	for range 3 {
		open = append(open, esmetest.Dial(t, f.addr, nil))
	}
	waitUntil(t, func() bool { return f.srv.unboundAt("127.0.0.1") == 3 })
	if !closedSoon(esmetest.Dial(t, f.addr, nil)) {
		t.Fatal("a fourth unbound connection from the address stays open")
	}
	if st := esmetest.DialFrom(t, f.addr, "127.0.0.2").Bind(smpp.BindTransmitter, "acme", f.pw); st != smpp.StatusOK {
		t.Fatalf("another address: %s", st)
	}
	if st := open[0].Bind(smpp.BindTransmitter, "acme", f.pw); st != smpp.StatusOK {
		t.Fatalf("bind on an open connection: %s", st)
	}
	waitUntil(t, func() bool { return f.srv.unboundAt("127.0.0.1") == 2 })
	if st := esmetest.Dial(t, f.addr, nil).Call(smpp.EnquireLink, nil).Status; st != smpp.StatusInvBndSts {
		t.Fatalf("a connection after a bind freed a place: %s", st)
	}
}

// fakeRefusals keeps refusals in memory.
type fakeRefusals struct {
	mu   sync.Mutex
	rows []domain.SMPPRefusal
}

func (f *fakeRefusals) RecordSMPPRefusal(_ context.Context, r domain.SMPPRefusal) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rows = append(f.rows, r)
	return nil
}

func (f *fakeRefusals) all() []domain.SMPPRefusal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]domain.SMPPRefusal(nil), f.rows...)
}

// Every refused bind and submit_sm is logged with the system_id, the
// remote address and the reason, and kept for operators when its user
// exists.
func TestRefusalsLoggedAndKept(t *testing.T) {
	var logs nodetest.Buffer
	rf := &fakeRefusals{}
	f := start(t, func(c *Config) {
		c.Refusals = rf
		c.Log = slog.New(slog.NewTextHandler(&logs, nil))
	})
	if st := esmetest.Dial(t, f.addr, nil).Bind(smpp.BindTransmitter, "acme", "wrong"); st != smpp.StatusBindFail {
		t.Fatalf("wrong password: %s", st)
	}
	if st := esmetest.Dial(t, f.addr, nil).Bind(smpp.BindReceiver, "ghost", "wrong"); st != smpp.StatusBindFail {
		t.Fatalf("unknown system_id: %s", st)
	}
	e := f.bound(t, smpp.BindTransmitter, "other")
	var last smpp.Status
	for range 3 { // other may send 2 a minute
		last = e.Submit("", "5511999990000", "hi", 0).Status
	}
	if last != smpp.StatusThrottled {
		t.Fatalf("third submit: %s", last)
	}
	got := rf.all()
	if len(got) != 2 {
		t.Fatalf("kept %d refusals, want the bind of acme and the submit of other: %+v", len(got), got)
	}
	if r := got[0]; r.UserID != "smu_a" || r.AccountID != "acc_a" || r.Command != "bind_transmitter" ||
		r.Status != "ESME_RBINDFAIL" || r.Reason != reasonWrongPassword || r.Addr != "127.0.0.1" {
		t.Fatalf("bind refusal %+v", r)
	}
	if r := got[1]; r.UserID != "smu_b" || r.Command != "submit_sm" || r.Status != "ESME_RTHROTTLED" || r.Reason == "" {
		t.Fatalf("submit refusal %+v", r)
	}
	for _, want := range []string{
		`command=bind_transmitter systemId=acme userId=smu_a accountId=acc_a remoteAddr=127.0.0.1 status=ESME_RBINDFAIL reason="wrong password"`,
		`command=bind_receiver systemId=ghost userId="" accountId="" remoteAddr=127.0.0.1 status=ESME_RBINDFAIL reason="unknown system_id"`,
		`command=submit_sm systemId=other userId=smu_b`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

// One user's stalled receiver does not hold back another user's receipts:
// A has 2,000 waiting and a receiver that never reads; B's 3 arrive.
func TestStalledReceiverHoldsBackNoOne(t *testing.T) {
	f := start(t, nil)
	now := time.Now()
	f.items.mu.Lock()
	for i := range 2000 {
		f.items.rows = append(f.items.rows, domain.SMPPItem{ID: fmt.Sprintf("smd_a%04d", i), UserID: "smu_a",
			MessageID: fmt.Sprintf("msg_a%04d", i), Source: "5511999990000", Dest: "ACME", ESMClass: 4, Text: "id:x",
			State: 2, NextAttemptAt: now})
	}
	for i := range 3 {
		f.items.rows = append(f.items.rows, domain.SMPPItem{ID: fmt.Sprintf("smd_b%d", i), UserID: "smu_b",
			MessageID: fmt.Sprintf("msg_b%d", i), Source: "5511999990000", Dest: "OTHER", ESMClass: 4, Text: "id:y",
			State: 2, NextAttemptAt: now})
	}
	f.items.mu.Unlock()
	stalled := f.bound(t, smpp.BindReceiver, "acme") // never reads again
	_ = stalled
	// A's window fills first.
	waitUntil(t, func() bool {
		users, _ := f.srv.binds.receivers()
		_, room := users["smu_a"]
		return !room
	})
	rx := f.bound(t, smpp.BindReceiver, "other")
	got := rx.WaitDelivered(3)
	for i, p := range got {
		if rid, _ := p.Body.(*smpp.SM).TLVs.CString(smpp.TagReceiptedMessageID); rid != fmt.Sprintf("msg_b%d", i) {
			t.Fatalf("B's deliver_sm %d is %s", i, rid)
		}
	}
}

// unboundAt is how many connections of addr have not bound.
func (s *Server) unboundAt(addr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unbound[netip.MustParseAddr(addr)]
}

// A refusal repeated exactly within a second is counted rather than
// written again: a peer submitting past its rate limit makes one log line
// and one kept refusal a second, the next one saying how many it stands for.
func TestRepeatedRefusalsHeldBack(t *testing.T) {
	var logs nodetest.Buffer
	rf := &fakeRefusals{}
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano()) // write deadlines are set from it
	f := start(t, func(c *Config) {
		c.Refusals = rf
		c.Log = slog.New(slog.NewTextHandler(&logs, nil))
		c.Now = func() time.Time { return time.Unix(0, clock.Load()) }
	})
	e := f.bound(t, smpp.BindTransmitter, "other") // may send 2 a minute
	submit := func() smpp.Status { return e.Submit("", "5511999990000", "hi", 0).Status }
	for i := range 5 {
		if st := submit(); i >= 2 && st != smpp.StatusThrottled {
			t.Fatalf("submit %d: %s", i, st)
		}
	}
	if n := len(rf.all()); n != 1 {
		t.Fatalf("%d refusals kept for 3 repeats within a second, want 1", n)
	}
	clock.Add(int64(2 * time.Second))
	if st := submit(); st != smpp.StatusThrottled {
		t.Fatalf("submit after a second: %s", st)
	}
	if n := len(rf.all()); n != 2 {
		t.Fatalf("%d refusals kept, want 2", n)
	}
	if !strings.Contains(logs.String(), "reason=\"over the account's send rate limit\" repeatsHeldBack=2") {
		t.Fatalf("the log does not count the repeats held back:\n%s", logs.String())
	}
}
