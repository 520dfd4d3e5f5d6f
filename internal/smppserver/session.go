package smppserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	smpp "github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/workers"
)

// maxMalformed is how many malformed or unknown PDUs a session answers
// before it is closed: a peer that keeps sending them is broken or probing.
const maxMalformed = 5

// writeTimeout bounds one PDU write, so a peer that stops reading cannot
// hold a writer forever.
const writeTimeout = 10 * time.Second

// session is one SMPP connection.
type session struct {
	srv  *Server
	conn net.Conn
	addr netip.Addr
	id   string // the bind's name where binds are counted across nodes

	br *bufio.Reader

	writes smpp.Coalescer // concurrent PDUs share a write (see write)
	seq    atomic.Uint32

	mu    sync.Mutex
	bound smpp.CommandID // the bind command; 0 while open
	user  domain.SMPPUser
	acct  domain.Account
	// authAt is the settings counter that user and acct were read at or
	// after (0: unknown): a submit_sm hands it to the send, whose
	// transaction checks that the counter has not moved since, instead of
	// waiting for a read of its own before it starts (see Server.accept).
	authAt  int64
	pending map[uint32]*waiter // our requests awaiting a response

	inflight  chan struct{}           // one per submit_sm being handled
	submits   *workers.Pool[smpp.PDU] // the workers that answer them
	outgoing  chan struct{}           // one per deliver_sm awaiting its response
	starved   atomic.Bool             // rows went back to the table for want of room in outgoing
	unbound   atomic.Bool             // counted among its address's unbound connections
	lastRead  atomic.Int64            // unix nanoseconds
	malformed int
	closed    chan struct{}
	closeOnce sync.Once
	handlers  sync.WaitGroup
}

func newSession(srv *Server, conn net.Conn) *session {
	return &session{srv: srv, conn: conn, br: bufio.NewReaderSize(conn, 4096), addr: peerAddr(conn), id: fmt.Sprintf("%s/%d", srv.cfg.Owner, srv.bindSeq.Add(1)), pending: map[uint32]*waiter{},
		inflight: make(chan struct{}, srv.cfg.Window), outgoing: make(chan struct{}, srv.cfg.Window),
		closed: make(chan struct{})}
}

// serve reads PDUs until the connection ends, then waits for the submits
// being handled, which answer only once their message is stored.
func (s *session) serve(ctx context.Context) {
	defer func() {
		s.shutdown()
		s.handlers.Wait()
		s.unregister()
	}()
	s.submits = workers.New(submitLinger, s.closed, &s.handlers, func(p smpp.PDU) {
		s.answerSubmit(ctx, p)
		<-s.inflight
	})
	s.lastRead.Store(s.srv.cfg.Now().UnixNano())
	go s.keepAlive()
	for {
		p, err := smpp.ReadPDU(s.br)
		if err != nil {
			if !s.readError(p, err) {
				return
			}
			continue
		}
		s.lastRead.Store(s.srv.cfg.Now().UnixNano())
		if !s.handle(ctx, p) {
			return
		}
	}
}

// readError answers what could be read of a bad PDU and says whether the
// session goes on.
func (s *session) readError(p smpp.PDU, err error) bool {
	switch {
	case errors.Is(err, smpp.ErrLength):
		// The next PDU cannot be found in the stream any more.
		s.respond(smpp.GenericNack, smpp.StatusInvCmdLen, 0, nil)
		return false
	case errors.Is(err, smpp.ErrMalformed):
		s.respond(smpp.GenericNack, smpp.StatusInvCmdLen, p.Seq, nil)
		return s.strike()
	}
	return false
}

// strike counts a malformed or unknown PDU; too many close the session.
func (s *session) strike() bool {
	s.malformed++
	return s.malformed < maxMalformed
}

// handle answers one PDU and says whether the session goes on.
func (s *session) handle(ctx context.Context, p smpp.PDU) bool {
	if p.Command.IsResponse() {
		s.settle(p)
		return true
	}
	kind := s.kind()
	switch p.Command {
	case smpp.EnquireLink:
		st := smpp.StatusOK
		if kind == 0 {
			st = smpp.StatusInvBndSts // every request but a bind waits for one
		}
		s.respond(smpp.EnquireLinkResp, st, p.Seq, nil)
	case smpp.BindTransmitter, smpp.BindReceiver, smpp.BindTransceiver:
		if kind != 0 {
			s.respond(p.Command.Resp(), smpp.StatusAlyBnd, p.Seq, nil)
			return true
		}
		s.bind(ctx, p)
	case smpp.Unbind:
		if kind == 0 {
			s.respond(smpp.UnbindResp, smpp.StatusInvBndSts, p.Seq, nil)
			return true
		}
		s.respond(smpp.UnbindResp, smpp.StatusOK, p.Seq, nil)
		return false
	case smpp.SubmitSM:
		if kind != smpp.BindTransmitter && kind != smpp.BindTransceiver {
			s.respond(smpp.SubmitSMResp, smpp.StatusInvBndSts, p.Seq, nil)
			return true
		}
		s.startSubmit(p)
	case smpp.DeliverSM, smpp.QuerySM:
		st := smpp.StatusInvCmdID // not taken from ESMEs
		if kind == 0 {
			st = smpp.StatusInvBndSts
		}
		s.respond(p.Command.Resp(), st, p.Seq, nil)
	default:
		s.respond(smpp.GenericNack, smpp.StatusInvCmdID, p.Seq, nil)
		return s.strike()
	}
	return true
}

// submitLinger is how long a submit worker waits for its next submit_sm
// before it ends (see package workers).
const submitLinger = time.Second

// startSubmit handles a submit_sm on a worker goroutine of the session,
// at most Window at once: a peer past its window waits for its earlier
// answers.
func (s *session) startSubmit(p smpp.PDU) {
	select {
	case s.inflight <- struct{}{}:
	case <-s.closed:
		return
	}
	s.submits.Go(p)
}

// answerSubmit stores a submit_sm's message, or refuses it, and answers.
func (s *session) answerSubmit(ctx context.Context, p smpp.PDU) {
	// The submit finishes even if the node stops: its answer follows
	// the durable write, or the peer sees the connection end.
	id, st, reason := s.srv.submit(context.WithoutCancel(ctx), s, p)
	var body smpp.Body
	if st == smpp.StatusOK {
		body = &smpp.SMResp{MessageID: id}
	}
	if st != smpp.StatusOK {
		// Kept before the answer, so that the refusal is on record by
		// the time the peer sees it.
		u, _ := s.caller()
		s.srv.refused(ctx, s, u, u.SystemID, smpp.SubmitSM, st, reason)
	}
	s.respond(smpp.SubmitSMResp, st, p.Seq, body)
	if f := s.srv.cfg.Observer.Submit; f != nil {
		f(uint32(st))
	}
}

func (s *session) bind(ctx context.Context, p smpp.PDU) {
	b, ok := p.Body.(*smpp.Bind)
	reason := reasonMalformedBind
	var u domain.SMPPUser
	var acct domain.Account
	var at int64
	systemID := ""
	if ok {
		systemID = b.SystemID
		u, acct, at, reason = s.srv.authenticate(ctx, s, p.Command, b)
	}
	if reason != "" {
		if f := s.srv.cfg.Observer.BindFail; f != nil {
			f()
		}
		s.srv.refused(ctx, s, u, systemID, p.Command, smpp.StatusBindFail, reason)
		s.respond(p.Command.Resp(), smpp.StatusBindFail, p.Seq, nil)
		return
	}
	s.srv.bound(s)
	s.mu.Lock()
	s.bound, s.user, s.acct, s.authAt = p.Command, u, acct, at
	s.mu.Unlock()
	s.respond(p.Command.Resp(), smpp.StatusOK, p.Seq, &smpp.BindResp{SystemID: "msgsvc",
		TLVs: smpp.TLVs{smpp.ByteTLV(smpp.TagSCInterfaceVersion, smpp.InterfaceVersion)}})
	if f := s.srv.cfg.Observer.Binds; f != nil {
		f(1)
	}
	if s.receives() {
		s.srv.queue.bound(u.ID)
	}
}

func (s *session) kind() smpp.CommandID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bound
}

func (s *session) caller() (domain.SMPPUser, domain.Account) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.user, s.acct
}

// callerAt is caller with the counter its answer was read at.
func (s *session) callerAt() (domain.SMPPUser, domain.Account, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.user, s.acct, s.authAt
}

// setAccount gives the session its account as read after the counter
// stood at v.
func (s *session) setAccount(a domain.Account, v int64) {
	s.mu.Lock()
	s.acct, s.authAt = a, v
	s.mu.Unlock()
}

func (s *session) receives() bool {
	k := s.kind()
	return k == smpp.BindReceiver || k == smpp.BindTransceiver
}

func (s *session) unregister() {
	s.mu.Lock()
	k, u := s.bound, s.user
	s.mu.Unlock()
	if k == 0 {
		return
	}
	s.srv.binds.remove(u.ID, s)
	if k == smpp.BindReceiver || k == smpp.BindTransceiver {
		s.srv.queue.unbound(context.Background(), u.ID)
	}
	if b := s.srv.cfg.Binds; b != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := b.DropSMPPBind(ctx, s.id); err != nil {
			s.srv.cfg.Log.Warn("smpp: forget a closed bind; it expires", "err", err)
		}
	}
	if f := s.srv.cfg.Observer.Binds; f != nil {
		f(-1)
	}
}

// respond writes a response; a write error closes the session.
func (s *session) respond(cmd smpp.CommandID, st smpp.Status, seq uint32, body smpp.Body) {
	if err := s.write(smpp.PDU{Command: cmd, Status: st, Seq: seq, Body: body}); err != nil {
		s.shutdown()
	}
}

// write writes one PDU. Under load many goroutines write at once
// (submit_sm_resp from every submit worker, deliver_sm from the receipt
// lanes), so they share the socket's writes (Coalescer).
func (s *session) write(p smpp.PDU) error {
	b, err := smpp.Encode(p)
	if err != nil {
		return err
	}
	return s.writes.Write(b, func(buf []byte) error {
		if err := s.conn.SetWriteDeadline(s.srv.cfg.Now().Add(writeTimeout)); err != nil {
			return err
		}
		_, err := s.conn.Write(buf)
		return err
	})
}

// request writes a request and returns the wait for its response. At
// most Window requests await theirs at once: a slot is freed when the
// response comes or its time runs out, whether or not anyone waits yet,
// so callers may write many before they wait; with the window full it
// fails with errWindowFull rather than wait. Requests go out in the order
// request is called.
func (s *session) request(ctx context.Context, cmd smpp.CommandID, body smpp.Body) (func() (smpp.PDU, error), error) {
	select {
	case <-s.closed:
		return nil, errClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	select {
	case s.outgoing <- struct{}{}:
	default:
		return nil, errWindowFull
	}
	seq := s.seq.Add(1)
	w := &waiter{ch: make(chan outcome, 1)}
	s.mu.Lock()
	s.pending[seq] = w
	w.timer = time.AfterFunc(s.srv.cfg.ResponseTimeout, func() { s.finish(seq, outcome{err: errTimeout}) })
	s.mu.Unlock()
	if err := s.write(smpp.PDU{Command: cmd, Seq: seq, Body: body}); err != nil {
		s.finish(seq, outcome{err: errClosed})
		s.shutdown()
		return nil, errClosed
	}
	return func() (smpp.PDU, error) {
		select {
		case o := <-w.ch:
			return o.p, o.err
		case <-s.closed:
			return smpp.PDU{}, errClosed
		}
	}, nil
}

// waiter is a request awaiting its response.
type waiter struct {
	ch    chan outcome
	timer *time.Timer
}

type outcome struct {
	p   smpp.PDU
	err error
}

// finish settles a request once, freeing its slot of the window.
func (s *session) finish(seq uint32, o outcome) {
	s.mu.Lock()
	w := s.pending[seq]
	delete(s.pending, seq)
	s.mu.Unlock()
	if w == nil {
		return
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	<-s.outgoing
	w.ch <- o
}

var (
	errClosed     = errors.New("smpp: session closed")
	errTimeout    = errors.New("smpp: no response in time")
	errWindowFull = errors.New("smpp: window full")
)

// settle hands a response to the request waiting for it.
func (s *session) settle(p smpp.PDU) { s.finish(p.Seq, outcome{p: p}) }

// keepAlive checks an idle link with enquire_link and closes one silent
// for three intervals.
func (s *session) keepAlive() {
	every := s.srv.cfg.EnquireLink
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.closed:
			return
		case <-t.C:
		}
		idle := s.srv.cfg.Now().Sub(time.Unix(0, s.lastRead.Load()))
		switch {
		case idle >= 3*every:
			s.shutdown()
			return
		case idle >= every:
			seq := s.seq.Add(1)
			if err := s.write(smpp.PDU{Command: smpp.EnquireLink, Seq: seq}); err != nil {
				s.shutdown()
				return
			}
		}
	}
}

func (s *session) shutdown() {
	s.closeOnce.Do(func() {
		close(s.closed)
		s.conn.Close()
	})
}

func (s *session) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}
