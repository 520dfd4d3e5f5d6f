package smppserver

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/intake"
	smpp "github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/ratelimit"
	"github.com/msgsvc/msgsvc/internal/smppserver/esmetest"
	"github.com/msgsvc/msgsvc/internal/user"
)

// fakeUsers holds SMPP users by system_id.
type fakeUsers struct {
	mu      sync.Mutex
	users   map[string]domain.SMPPUser
	accts   map[string]domain.Account
	version int64
	reads   int // of the version
}

func (f *fakeUsers) SMPPUserBySystemID(_ context.Context, sys string) (domain.SMPPUser, domain.Account, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.users[sys]
	if !ok {
		return u, domain.Account{}, domain.ErrNotFound
	}
	return u, f.accts[u.AccountID], nil
}

func (f *fakeUsers) SMPPUsersPresent(_ context.Context, ids []string) (map[string]bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]bool{}
	for _, u := range f.users {
		if contains(ids, u.ID) {
			out[u.ID] = true
		}
	}
	return out, nil
}

func (f *fakeUsers) AuthVersion(context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return f.version, nil
}

func (f *fakeUsers) remove(sys string) {
	f.mu.Lock()
	delete(f.users, sys)
	f.mu.Unlock()
}

// allow sets an account's allow-list, moving the version as the store's
// triggers do.
func (f *fakeUsers) allow(accountID string, list ...string) {
	f.mu.Lock()
	a := f.accts[accountID]
	a.IPAllowlist = list
	f.accts[accountID] = a
	f.version++
	f.mu.Unlock()
}

// fakeSender accepts every send, or answers with err; block holds sends
// until it is closed.
type fakeSender struct {
	mu     sync.Mutex
	drafts []domain.SendRequest
	err    error
	block  chan struct{}
	n      atomic.Int64
	// version is the settings counter a send checks, as intake's
	// transaction does, when its principal carries one; nil checks nothing.
	version func() int64
	callers []domain.Principal // of the sends recorded
	stale   int                // sends refused with ErrStaleAuth
	overlap
}

// overlap counts the calls running now (busy) and the most that ever ran
// at once (most).
type overlap struct{ busy, most atomic.Int64 }

// enter records a call starting; the func it returns records its end.
func (o *overlap) enter() (exit func()) {
	b := o.busy.Add(1)
	for {
		m := o.most.Load()
		if b <= m || o.most.CompareAndSwap(m, b) {
			break
		}
	}
	return func() { o.busy.Add(-1) }
}

func (f *fakeSender) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.drafts)
}

func (f *fakeSender) Send(_ context.Context, c domain.Principal, d domain.SendRequest, _ intake.SendOptions) (intake.Outcome, error) {
	defer f.enter()()
	if f.block != nil {
		<-f.block
	}
	if c.AuthVersion != 0 && f.version != nil && c.AuthVersion != f.version() {
		f.mu.Lock()
		f.stale++
		f.mu.Unlock()
		return intake.Outcome{}, intake.ErrStaleAuth // nothing written
	}
	f.mu.Lock()
	f.drafts = append(f.drafts, d)
	f.callers = append(f.callers, c)
	err := f.err
	f.mu.Unlock()
	if err != nil {
		return intake.Outcome{}, err
	}
	id := fmt.Sprintf("msg_%026d", f.n.Add(1))
	return intake.Outcome{Receipt: intake.Receipt{Messages: []intake.Planned{{Message: domain.Message{ID: id,
		AccountID: c.Account.ID, Env: c.Env}}}}}, nil
}

// fakeItems is the table of waiting deliver_sm in memory.
type fakeItems struct {
	mu      sync.Mutex
	rows    []domain.SMPPItem
	acked   []string
	claimed int // rows claimed, in all
}

func (f *fakeItems) ClaimSMPPItems(_ context.Context, users, _ map[string]int, owner string, now time.Time, d time.Duration, limit int) ([]domain.SMPPItem, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []domain.SMPPItem
	per := map[string]int{}
	for i, r := range f.rows {
		if len(out) == limit || r.NextAttemptAt.After(now) || per[r.UserID] >= users[r.UserID] {
			continue
		}
		per[r.UserID]++
		f.claimed++
		f.rows[i].LeaseOwner, f.rows[i].NextAttemptAt = owner, now.Add(d)
		out = append(out, f.rows[i])
	}
	return out, nil
}

func (f *fakeItems) ReleaseSMPPItems(_ context.Context, owner string, ids []string, now time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range f.rows {
		if r.LeaseOwner == owner && contains(ids, r.ID) {
			f.rows[i].LeaseOwner, f.rows[i].NextAttemptAt = "", now
		}
	}
	return nil
}

func (f *fakeItems) AckSMPPItems(_ context.Context, ids []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range ids {
		for i, r := range f.rows {
			if r.ID == id {
				f.rows = append(f.rows[:i], f.rows[i+1:]...)
				f.acked = append(f.acked, id)
				break
			}
		}
	}
	return nil
}

func (f *fakeItems) PurgeSMPPItems(context.Context, time.Time) (int64, error) { return 0, nil }

func (f *fakeItems) left() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.rows)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

type fixture struct {
	srv    *Server
	addr   string
	users  *fakeUsers
	sender *fakeSender
	items  *fakeItems
	pw     string
}

// hash is made once: argon2id costs tens of milliseconds.
// testHasher keeps hashing cheap: what a hash costs is internal/user's
// concern, and at the recommended cost one takes a third of a second
// under the race detector.
var testHasher = user.Hasher{Time: 1, Memory: 64, Threads: 1}

var hashOnce = sync.OnceValues(func() (string, error) { return testHasher.Hash("secret1") })

func start(t *testing.T, mod func(c *Config)) *fixture {
	t.Helper()
	hash, err := hashOnce()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{users: &fakeUsers{users: map[string]domain.SMPPUser{
		"acme":  {ID: "smu_a", AccountID: "acc_a", Env: domain.Test, SystemID: "acme", PasswordHash: hash, MaxBinds: 2},
		"other": {ID: "smu_b", AccountID: "acc_b", Env: domain.Live, SystemID: "other", PasswordHash: hash, MaxBinds: 2},
	}, accts: map[string]domain.Account{"acc_a": {ID: "acc_a"}, "acc_b": {ID: "acc_b", Limits: domain.Limits{SendRPM: 2}}},
		version: 1}, // as the store's counter starts: 0 is no counter
		sender: &fakeSender{}, items: &fakeItems{}, pw: "secret1"}
	// The limiter counts whole minutes of its clock: a fixed one keeps a
	// test's burst in one window.
	f.sender.version = func() int64 { // the transaction's read, not the server's
		f.users.mu.Lock()
		defer f.users.mu.Unlock()
		return f.users.version
	}
	fixed := time.Date(2026, 3, 1, 12, 0, 1, 0, time.UTC)
	mem := ratelimit.NewMemory(func() time.Time { return fixed })
	c := Config{Users: f.users, Sender: f.sender, Items: f.items, Limiter: mem, Guard: mem, BindFailuresPerMinute: 3,
		Owner: "node-1", Poll: 20 * time.Millisecond, ResponseTimeout: 2 * time.Second, Hasher: testHasher}
	if mod != nil {
		mod(&c)
	}
	f.srv = New(c)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	f.addr = ln.Addr().String()
	return f
}

func (f *fixture) bound(t *testing.T, kind smpp.CommandID, sys string) *esmetest.ESME {
	t.Helper()
	e := esmetest.Dial(t, f.addr, nil)
	if st := e.Bind(kind, sys, f.pw); st != smpp.StatusOK {
		t.Fatalf("bind %s as %s: %s", kind, sys, st)
	}
	return e
}

// A malformed PDU is answered with generic_nack ESME_RINVCMDLEN and the
// session goes on; repeated ones, or a length that loses the stream,
// close it.
func TestMalformedPDUs(t *testing.T) {
	f := start(t, nil)
	e := f.bound(t, smpp.BindTransceiver, "acme")
	// A submit_sm whose sm_length runs past the body.
	bad := []byte{0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 200}
	binary.BigEndian.PutUint32(bad, uint32(len(bad)))
	e.WriteRaw(bad)
	if p := e.Response(9); p.Command != smpp.GenericNack || p.Status != smpp.StatusInvCmdLen || p.Seq != 9 {
		t.Fatalf("malformed submit_sm: %s %s seq %d", p.Command, p.Status, p.Seq)
	}
	if p := e.Call(smpp.EnquireLink, nil); p.Status != smpp.StatusOK {
		t.Fatalf("the session after one malformed PDU: %s", p.Status)
	}
	for i := 0; i < maxMalformed; i++ {
		e.WriteRaw(bad)
	}
	if !closedSoon(e) {
		t.Fatal("the session stays open after repeated malformed PDUs")
	}

	e2 := f.bound(t, smpp.BindTransceiver, "acme")
	e2.WriteRaw([]byte{0, 0, 0, 3, 0, 0, 0, 0})
	if p, err := e2.Read(); err != nil || p.Command != smpp.GenericNack || p.Status != smpp.StatusInvCmdLen {
		t.Fatalf("bad command_length: %+v %v", p, err)
	}
	if !closedSoon(e2) {
		t.Fatal("the session stays open after a bad command_length")
	}
}

// closedSoon reads until the server closes the connection.
func closedSoon(e *esmetest.ESME) bool {
	for i := 0; i < 100; i++ {
		if _, err := e.Read(); err != nil {
			var ne net.Error
			return !(errors.As(err, &ne) && ne.Timeout())
		}
	}
	return false
}

// Failed binds from an address are throttled: past the budget even the
// right password is refused, unless its user has bound from there before.
func TestBindFailuresThrottled(t *testing.T) {
	f := start(t, nil)
	f.bound(t, smpp.BindTransmitter, "acme").Close()
	e := esmetest.Dial(t, f.addr, nil)
	for i := 0; i < 3; i++ {
		if st := e.Bind(smpp.BindTransmitter, "acme", "wrong"); st != smpp.StatusBindFail {
			t.Fatalf("wrong password: %s", st)
		}
	}
	if st := e.Bind(smpp.BindTransmitter, "other", f.pw); st != smpp.StatusBindFail {
		t.Fatalf("a right password from a throttled address, never bound there: %s", st)
	}
	if st := e.Bind(smpp.BindTransmitter, "acme", f.pw); st != smpp.StatusOK {
		t.Fatalf("a user that bound from the address before: %s", st)
	}
}

// More binds than the user's maxBinds are refused like any failure.
func TestMaxBinds(t *testing.T) {
	f := start(t, nil)
	f.bound(t, smpp.BindTransmitter, "acme")
	f.bound(t, smpp.BindReceiver, "acme")
	if st := esmetest.Dial(t, f.addr, nil).Bind(smpp.BindTransceiver, "acme", f.pw); st != smpp.StatusBindFail {
		t.Fatalf("third bind of a user with maxBinds 2: %s", st)
	}
}

// Over the account's send rate limit submit_sm gets ESME_RTHROTTLED.
func TestSubmitThrottled(t *testing.T) {
	f := start(t, nil)
	e := f.bound(t, smpp.BindTransmitter, "other")
	var got []smpp.Status
	for i := 0; i < 4; i++ {
		got = append(got, e.Submit("", "5511999990000", "hi", 0).Status)
	}
	want := []smpp.Status{smpp.StatusOK, smpp.StatusOK, smpp.StatusThrottled, smpp.StatusThrottled}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
}

// Submits are pipelined: up to the window run at once, and each is
// answered with its own sequence number.
func TestSubmitWindow(t *testing.T) {
	f := start(t, func(c *Config) { c.Window = 5 })
	f.sender.block = make(chan struct{})
	e := f.bound(t, smpp.BindTransceiver, "acme")
	var seqs []uint32
	for i := 0; i < 8; i++ {
		seqs = append(seqs, e.Send(smpp.SubmitSM, &smpp.SM{DestAddr: "5511999990000", ShortMessage: []byte("hi")}))
	}
	deadline := time.Now().Add(10 * time.Second)
	for f.sender.busy.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(f.sender.block)
	ids := map[string]bool{}
	for _, s := range seqs {
		p := e.Response(s)
		if p.Status != smpp.StatusOK {
			t.Fatalf("submit %d: %s", s, p.Status)
		}
		ids[p.Body.(*smpp.SMResp).MessageID] = true
	}
	if most := f.sender.most.Load(); most != 5 || len(ids) != 8 {
		t.Fatalf("%d sends at once (window 5), %d distinct ids of 8", most, len(ids))
	}
}

// What a submit_sm says reaches the send: the texts of the three codings
// and message_payload, validity and schedule, the receipt request.
func TestSubmitFields(t *testing.T) {
	f := start(t, nil)
	e := f.bound(t, smpp.BindTransceiver, "acme")
	subs := []*smpp.SM{
		{DestAddr: "+5511999990000", DataCoding: smpp.CodingDefault, ShortMessage: []byte{'a', 0x11, 'b'}, RegisteredDelivery: 1},
		{DestAddr: "5511999990000", DataCoding: smpp.CodingLatin1, ShortMessage: []byte{'c', 0xE9}},
		{DestAddr: "5511999990000", DataCoding: smpp.CodingUCS2, ShortMessage: []byte{0x04, 0x1F, 0x00, 0x21}},
		{DestAddr: "5511999990000", TLVs: smpp.TLVs{{Tag: smpp.TagMessagePayload, Value: []byte("long payload")}},
			ValidityPeriod: "000001000000000R", ScheduleDeliveryTime: "301121100000000+"},
		{DestAddr: "5511999990000", ESMClass: smpp.ESMClassUDHI, ShortMessage: []byte{5, 0, 3, 7, 2, 1, 'p', 'a', 'r', 't'}},
	}
	for i, sm := range subs {
		if p := e.Call(smpp.SubmitSM, sm); p.Status != smpp.StatusOK {
			t.Fatalf("submit %d: %s", i, p.Status)
		}
	}
	if p := e.Call(smpp.SubmitSM, &smpp.SM{DestAddr: "5511999990000", DataCoding: smpp.CodingBinary, ShortMessage: []byte{1}}); p.Status != smpp.StatusInvDCS {
		t.Fatalf("binary data_coding: %s", p.Status)
	}
	d := f.sender.drafts
	if o := d[0].Origin; d[0].Text != "a_b" || len(d[0].Recipients) != 1 || d[0].Recipients[0] != "5511999990000" ||
		d[0].Channel != domain.SMS || o.Front != domain.FrontSMPP || o.SMPP == nil || !o.SMPP.Receipt || o.SMPP.User != "smu_a" {
		t.Fatalf("GSM submit: %+v %+v", d[0], d[0].Origin.SMPP)
	}
	if d[1].Text != "cé" || d[2].Text != "П!" || d[1].Origin.SMPP.Receipt {
		t.Fatalf("Latin-1 %q, UCS-2 %q", d[1].Text, d[2].Text)
	}
	if d[3].Text != "long payload" || d[3].Validity == nil || *d[3].Validity != 86400*time.Second ||
		!d[3].Schedule.Equal(time.Date(2030, 11, 21, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("payload, validity, schedule: %q %v %v", d[3].Text, d[3].Validity, d[3].Schedule)
	}
	if d[4].Text != "part" || hex.EncodeToString(d[4].UDH) != "050003070201" {
		t.Fatalf("UDH part: %q header %q", d[4].Text, d[4].UDH)
	}
}

// Refused sends map to their codes; the rest is ESME_RSUBMITFAIL.
func TestSubmitRefusals(t *testing.T) {
	f := start(t, nil)
	e := f.bound(t, smpp.BindTransceiver, "acme")
	cases := []struct {
		err  error
		want smpp.Status
	}{
		{&domain.ValidationError{Fields: []domain.FieldError{{Path: "recipients[0]", Message: "bad"}}}, smpp.StatusInvDstAdr},
		{&domain.ValidationError{Fields: []domain.FieldError{{Path: "sender", Message: "bad"}}}, smpp.StatusInvSrcAdr},
		{&domain.ValidationError{Fields: []domain.FieldError{{Path: "text", Message: "bad"}}}, smpp.StatusSubmitFail},
		{errors.New("insufficient credits"), smpp.StatusSubmitFail},
	}
	for _, c := range cases {
		f.sender.mu.Lock()
		f.sender.err = c.err
		f.sender.mu.Unlock()
		if p := e.Submit("", "5511999990000", "hi", 0); p.Status != c.want || p.Body != nil {
			t.Fatalf("%v: %s with body %v, want %s without", c.err, p.Status, p.Body, c.want)
		}
	}
}

// Waiting deliver_sm go to the user's receiving binds only, oldest first;
// one not acknowledged (a dropped session) goes again on the next bind,
// and one acknowledged never again.
func TestReceiptsRedeliveredOnRebind(t *testing.T) {
	f := start(t, nil)
	now := time.Now()
	for i, u := range []string{"smu_a", "smu_a", "smu_b", "smu_a"} {
		f.items.rows = append(f.items.rows, domain.SMPPItem{ID: fmt.Sprintf("smd_%d", i), UserID: u, MessageID: fmt.Sprintf("msg_%d", i),
			Source: "5511999990000", Dest: "ACME", ESMClass: 4, Text: "id:msg stat:DELIVRD", State: 2, NextAttemptAt: now})
	}
	tx := f.bound(t, smpp.BindTransmitter, "acme")
	if p := tx.Call(smpp.EnquireLink, nil); p.Status != smpp.StatusOK || len(tx.Delivered) != 0 {
		t.Fatal("a transmitter bind received deliver_sm")
	}
	rx := f.bound(t, smpp.BindReceiver, "acme")
	rx.AutoAck = false
	first := rx.WaitDelivered(3)
	rx.Write(smpp.PDU{Command: smpp.DeliverSMResp, Seq: first[0].Seq, Body: &smpp.SMResp{}})
	var order []string
	for _, p := range first {
		rid, _ := p.Body.(*smpp.SM).TLVs.CString(smpp.TagReceiptedMessageID)
		order = append(order, rid)
	}
	if fmt.Sprint(order) != "[msg_0 msg_1 msg_3]" {
		t.Fatalf("delivered %v, want A's oldest first", order)
	}
	waitUntil(t, func() bool { return f.items.left() == 3 })
	rx.Conn.Close() // two unacknowledged
	// The user may hold two binds: the new one waits until the server has
	// let the closed one go, as a real ESME's retry would find.
	waitUntil(t, func() bool { return len(f.srv.binds.of("smu_a")) == 1 })

	again := f.bound(t, smpp.BindTransceiver, "acme")
	got := again.WaitDelivered(2)
	waitUntil(t, func() bool { return f.items.left() == 1 })
	for _, p := range got {
		if rid, _ := p.Body.(*smpp.SM).TLVs.CString(smpp.TagReceiptedMessageID); rid == "msg_0" || rid == "msg_2" {
			t.Fatalf("redelivered %s", rid)
		}
	}
}

// More waiting deliver_sm than a bind's window all go out: each answer
// frees its slot for the next.
func TestMoreReceiptsThanTheWindow(t *testing.T) {
	f := start(t, func(c *Config) { c.Window = 5 })
	now := time.Now()
	for i := 0; i < 23; i++ {
		f.items.rows = append(f.items.rows, domain.SMPPItem{ID: fmt.Sprintf("smd_%02d", i), UserID: "smu_a",
			MessageID: fmt.Sprintf("msg_%02d", i), Source: "5511999990000", Dest: "ACME", ESMClass: 4, Text: "id:x",
			State: 2, NextAttemptAt: now})
	}
	rx := f.bound(t, smpp.BindReceiver, "acme")
	got := rx.WaitDelivered(23)
	for i, p := range got {
		if rid, _ := p.Body.(*smpp.SM).TLVs.CString(smpp.TagReceiptedMessageID); rid != fmt.Sprintf("msg_%02d", i) {
			t.Fatalf("deliver_sm %d is %s: not oldest first", i, rid)
		}
	}
	waitUntil(t, func() bool { return f.items.left() == 0 })
}

// Removing a user closes its binds within a poll, on nodes that were not
// told.
func TestRemovedUserNoticed(t *testing.T) {
	f := start(t, nil)
	e := f.bound(t, smpp.BindTransceiver, "acme")
	f.users.remove("acme")
	if !closedSoon(e) {
		t.Fatal("the bind of a removed user stays open")
	}
}

// A user removed on another node (the store moves the settings counter)
// bites at the bind's next submit_sm, not at the next poll: the submit is
// refused, nothing is sent, and the bind is closed.
func TestRemovedUserBitesAtTheNextSubmit(t *testing.T) {
	f := start(t, func(c *Config) { c.Poll = time.Hour })
	e := f.bound(t, smpp.BindTransceiver, "acme")
	if p := e.Submit("", "5511999990000", "before", 0); p.Status != smpp.StatusOK {
		t.Fatalf("submit before the removal: %s", p.Status)
	}
	sent := f.sender.count()
	f.users.mu.Lock()
	delete(f.users.users, "acme")
	f.users.version++
	f.users.mu.Unlock()
	// The bind may be closed before the refusal is written: either is the
	// removal biting.
	e.Send(smpp.SubmitSM, &smpp.SM{DestTON: smpp.TONInternational, DestNPI: smpp.NPIISDN, DestAddr: "5511999990000",
		ShortMessage: []byte("after")})
	if p, err := e.Read(); err == nil && (p.Command != smpp.SubmitSMResp || p.Status != smpp.StatusSubmitFail) {
		t.Fatalf("submit after the removal: %s %s", p.Command, p.Status)
	}
	if n := f.sender.count(); n != sent {
		t.Fatalf("%d sends after the removal", n-sent)
	}
	if !closedSoon(e) {
		t.Fatal("the bind of a removed user stays open")
	}
}

// An allow-list that no longer admits a bind's address closes it, and a
// bind from outside the list is refused.
func TestAllowListBitesOnOpenBinds(t *testing.T) {
	f := start(t, nil)
	e := f.bound(t, smpp.BindTransceiver, "acme")
	f.users.allow("acc_a", "192.0.2.0/24")
	if !closedSoon(e) {
		t.Fatal("the bind stays open outside the new allow-list")
	}
	if st := esmetest.Dial(t, f.addr, nil).Bind(smpp.BindTransceiver, "acme", f.pw); st != smpp.StatusBindFail {
		t.Fatalf("bind from outside the allow-list: %s", st)
	}
	f.users.allow("acc_a", "127.0.0.1")
	f.bound(t, smpp.BindTransceiver, "acme")
}

// TLS on the same port when configured.
func TestTLS(t *testing.T) {
	cert := esmetest.SelfSigned(t)
	f := start(t, func(c *Config) { c.TLS = &tls.Config{Certificates: []tls.Certificate{cert}} })
	e := esmetest.Dial(t, f.addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // a test's own certificate
	if st := e.Bind(smpp.BindTransceiver, "acme", f.pw); st != smpp.StatusOK {
		t.Fatalf("bind over TLS: %s", st)
	}
	if p := e.Submit("", "5511999990000", "hi", 0); p.Status != smpp.StatusOK {
		t.Fatalf("submit over TLS: %s", p.Status)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A refused submit's reason names the submit_sm's fields, not the core's
// domain paths nor another front's names.
func TestRefusalReasonInSMPPTerms(t *testing.T) {
	err := &domain.ValidationError{Fields: []domain.FieldError{
		{Path: "recipients[0]", Code: domain.FieldInvalid, Message: "is not a valid phone number"},
		{Path: "sender", Code: domain.FieldNotApproved, Message: "is not approved"},
		{Field: "already", Path: "text", Message: "kept"},
	}}
	got := inSMPPTerms(err)
	if got.Error() != "destination_addr is not a valid phone number" {
		t.Fatalf("reason %q", got.Error())
	}
	v, _ := domain.IsValidation(got)
	if v.Fields[1].Field != "source_addr" || v.Fields[2].Field != "already" || v.Fields[0].Code != domain.FieldInvalid {
		t.Fatalf("fields %+v", v.Fields)
	}
	if err.Fields[0].Field != "" {
		t.Fatal("the core's refusal was changed in place")
	}
	plain := errors.New("store down")
	if inSMPPTerms(plain) != plain {
		t.Fatal("an error that is no refusal was rewritten")
	}
}
