package smpp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
)

// fakeSMSC is a small SMSC built on this package's codec, for tests. It
// records everything it receives; hooks decide how it answers.
type fakeSMSC struct {
	t  testing.TB
	ln net.Listener

	mu         sync.Mutex
	conns      []*fakeConn
	binds      []*pdu.Bind
	submits    []fakeSubmit
	enquires   int
	unbinds    int
	resps      []pdu.PDU // responses from the client (deliver_sm_resp, enquire_link_resp, generic_nack)
	nextID     int
	bindStatus func(n int) pdu.Status
	// onSubmit sees the n-th submit_sm (from 1); it answers by itself and
	// returns true, or returns false for the default: ESME_ROK, a new id.
	onSubmit      func(fc *fakeConn, p pdu.PDU, n int) bool
	ignoreEnquire bool
	// queries are the query_sm received; states answers them by message id
	// (an id it does not hold answers ESME_RQUERYFAIL).
	queries []*pdu.Query
	states  map[string]pdu.QueryResp
}

type fakeSubmit struct {
	conn int
	sm   *pdu.SM
}

type fakeConn struct {
	f   *fakeSMSC
	idx int
	c   net.Conn
	wmu sync.Mutex
	seq atomic.Uint32
}

func newFakeSMSC(t testing.TB) *fakeSMSC {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSMSC{t: t, ln: ln}
	go f.accept()
	t.Cleanup(f.close)
	return f
}

func (f *fakeSMSC) addr() string { return f.ln.Addr().String() }

func (f *fakeSMSC) close() {
	_ = f.ln.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fc := range f.conns {
		_ = fc.c.Close()
	}
}

func (f *fakeSMSC) accept() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		fc := &fakeConn{f: f, idx: len(f.conns), c: c}
		f.conns = append(f.conns, fc)
		f.mu.Unlock()
		go f.serve(fc)
	}
}

func (f *fakeSMSC) serve(fc *fakeConn) {
	defer fc.c.Close()
	for {
		p, err := pdu.ReadPDU(fc.c)
		if err != nil {
			return
		}
		switch p.Command {
		case pdu.BindTransceiver:
			if !f.bind(fc, p) {
				return
			}
		case pdu.SubmitSM:
			f.mu.Lock()
			f.submits = append(f.submits, fakeSubmit{conn: fc.idx, sm: p.Body.(*pdu.SM)})
			n, hook := len(f.submits), f.onSubmit
			f.mu.Unlock()
			if hook == nil || !hook(fc, p, n) {
				fc.ok(p)
			}
		case pdu.QuerySM:
			q := p.Body.(*pdu.Query)
			f.mu.Lock()
			f.queries = append(f.queries, q)
			r, ok := f.states[q.MessageID]
			f.mu.Unlock()
			if !ok {
				fc.send(pdu.PDU{Command: pdu.QuerySMResp, Status: pdu.StatusQueryFail, Seq: p.Seq})
				continue
			}
			r.MessageID = q.MessageID
			fc.send(pdu.PDU{Command: pdu.QuerySMResp, Seq: p.Seq, Body: &r})
		case pdu.EnquireLink:
			f.mu.Lock()
			f.enquires++
			ignore := f.ignoreEnquire
			f.mu.Unlock()
			if !ignore {
				fc.send(pdu.PDU{Command: pdu.EnquireLinkResp, Seq: p.Seq})
			}
		case pdu.Unbind:
			f.mu.Lock()
			f.unbinds++
			f.mu.Unlock()
			fc.send(pdu.PDU{Command: pdu.UnbindResp, Seq: p.Seq})
			return
		default:
			f.mu.Lock()
			f.resps = append(f.resps, p)
			f.mu.Unlock()
		}
	}
}

func (f *fakeSMSC) bind(fc *fakeConn, p pdu.PDU) bool {
	f.mu.Lock()
	f.binds = append(f.binds, p.Body.(*pdu.Bind))
	n, hook := len(f.binds), f.bindStatus
	f.mu.Unlock()
	st := pdu.StatusOK
	if hook != nil {
		st = hook(n)
	}
	if st != pdu.StatusOK {
		fc.send(pdu.PDU{Command: pdu.BindTransceiverResp, Status: st, Seq: p.Seq})
		return false
	}
	fc.send(pdu.PDU{Command: pdu.BindTransceiverResp, Seq: p.Seq, Body: &pdu.BindResp{SystemID: "FAKESMSC"}})
	return true
}

// set changes the fake's behaviour under its lock.
func (f *fakeSMSC) set(fn func(f *fakeSMSC)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeSMSC) newID() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	return "M" + strconv.Itoa(f.nextID)
}

func (f *fakeSMSC) submitList() []fakeSubmit {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeSubmit(nil), f.submits...)
}

func (f *fakeSMSC) count(what func(f *fakeSMSC) int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return what(f)
}

func (f *fakeSMSC) conn(i int) *fakeConn {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i < len(f.conns) {
		return f.conns[i]
	}
	return nil
}

// respTo finds the client's response to a request the fake sent.
func (f *fakeSMSC) respTo(cmd pdu.CommandID, seq uint32) (pdu.PDU, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.resps {
		if p.Command == cmd && p.Seq == seq {
			return p, true
		}
	}
	return pdu.PDU{}, false
}

func (fc *fakeConn) send(p pdu.PDU) {
	b, err := pdu.Encode(p)
	if err != nil {
		panic(fmt.Sprintf("fake SMSC cannot encode %v: %v", p.Command, err))
	}
	fc.sendRaw(b)
}

func (fc *fakeConn) sendRaw(b []byte) {
	fc.wmu.Lock()
	defer fc.wmu.Unlock()
	_, _ = fc.c.Write(b)
}

// ok answers a submit_sm with a new message id.
func (fc *fakeConn) ok(p pdu.PDU) string {
	id := fc.f.newID()
	fc.send(pdu.PDU{Command: pdu.SubmitSMResp, Seq: p.Seq, Body: &pdu.SMResp{MessageID: id}})
	return id
}

// request sends a PDU from the SMSC side and returns its sequence number.
func (fc *fakeConn) request(cmd pdu.CommandID, body pdu.Body) uint32 {
	seq := fc.seq.Add(1) + 1000
	fc.send(pdu.PDU{Command: cmd, Seq: seq, Body: body})
	return seq
}

// newSink records what a client named "smpp-test" reports; a report
// under another name fails.
func newSink() *providertest.Sink { return &providertest.Sink{Provider: "smpp-test"} }

func mustEncode(t testing.TB, p pdu.PDU) []byte {
	t.Helper()
	b, err := pdu.Encode(p)
	if err != nil {
		t.Fatalf("Encode(%v): %v", p.Command, err)
	}
	return b
}

// eventually polls cond until it holds or the deadline passes.
var eventually = polltest.Until

func testConfig(addr string) Config {
	return Config{
		Name: "smpp-test", Addr: addr, SystemID: "msgsvc", Password: "secret", SystemType: "VMA",
		SourceAddr: "MyShop", RequestTimeout: 3 * time.Second, EnquireLinkInterval: time.Hour,
		ReconnectMin: time.Millisecond, ReconnectMax: 5 * time.Millisecond,
		RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond, SubmitTimeout: 15 * time.Second,
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// started is a client of cfg, started, with a quiet log; the test closes
// it itself.
func started(t testing.TB, cfg Config, sink provider.Sink, opts ...Option) *Client {
	t.Helper()
	c, err := New(cfg, sink, append([]Option{WithLogger(quietLogger())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

// startClient starts a client and waits until all its binds are up.
func startClient(t testing.TB, cfg Config, sink provider.Sink, opts ...Option) *Client {
	t.Helper()
	c := started(t, cfg, sink, append([]Option{WithRand(func() float64 { return 0.5 })}, opts...)...)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	want := max(cfg.Binds, 1)
	eventually(t, "binds up", func() bool { return c.Health().BindsUp == want })
	return c
}

// fakeClock is a Clock that moves only when told to.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- f.now
		return ch
	}
	f.waiters = append(f.waiters, fakeWaiter{at: f.now.Add(d), ch: ch})
	return ch
}

func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	kept := f.waiters[:0]
	for _, w := range f.waiters {
		if w.at.After(f.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- f.now
	}
	f.waiters = kept
}

// waiting counts the waits that end within d from now.
func (f *fakeClock) waiting(d time.Duration) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, w := range f.waiters {
		if !w.at.After(f.now.Add(d)) {
			n++
		}
	}
	return n
}
