package smpp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/workers"
)

// maxInboundPerBind bounds the deliver_sm one bind handles at once (each
// holds a goroutine and, in the Sink, a write to the store). An SMSC keeps
// to its own window, so this mostly stops a misbehaving one from starting
// goroutines without end. Past it the bind stops reading its socket until
// a handler finishes: the SMSC waits (TCP pushes back) rather than getting
// ESME_RX_T_APPN, which a carrier that does not resend would turn into a
// lost receipt.
const maxInboundPerBind = 256

// inboundLinger is how long a deliver_sm handler waits for the next one
// before it ends (see package workers).
const inboundLinger = time.Second

var (
	errUnbound     = errors.New("smpp: the SMSC unbound")
	errClosed      = errors.New("smpp: client closed")
	errBadResponse = errors.New("smpp: unreadable response")
)

// session is one bound transceiver connection. Requests are pipelined:
// each holds a window slot until its response arrives, the request times
// out, or the connection ends; responses are matched by sequence number.
type session struct {
	slot  int
	cfg   *Config
	conn  net.Conn
	br    *bufio.Reader
	log   *slog.Logger
	onPDU func(s *session, p pdu.PDU) // handles deliver_sm, on a worker (handlers)
	// onTaken learns the SMSC's message_id of each accepted submit_sm in
	// the read loop, before any later PDU of this connection (its receipt
	// among them) is handled.
	onTaken  func(ref string)
	window   chan struct{}
	seq      atomic.Uint32
	inbound  chan struct{}          // one per deliver_sm being handled
	handlers *workers.Pool[pdu.PDU] // the goroutines that run onPDU
	// paused counts the times the read loop waited for a free inbound
	// handler (the client's counter; nil counts nothing).
	paused *atomic.Uint64
	wg     sync.WaitGroup // read loop, keep-alive and deliver_sm handlers

	lastRead atomic.Int64 // UnixNano of the last PDU received

	// PDUs written by concurrent callers share one write to the socket
	// (see writeRaw).
	writes pdu.Coalescer

	mu      sync.Mutex
	pending map[uint32]*request // removed once: by settle, forget or close, which frees its slot
	closed  bool
	err     error
	done    chan struct{}
}

type reply struct {
	pdu pdu.PDU
	err error
}

func newSession(slot int, cfg *Config, conn net.Conn, log *slog.Logger, onPDU func(*session, pdu.PDU)) *session {
	s := &session{
		slot: slot, cfg: cfg, conn: conn, br: bufio.NewReaderSize(conn, 4096),
		log: log.With("bind", slot), onPDU: onPDU,
		window:  make(chan struct{}, cfg.Window),
		inbound: make(chan struct{}, maxInboundPerBind),
		pending: make(map[uint32]*request),
		done:    make(chan struct{}),
	}
	s.handlers = workers.New(inboundLinger, s.done, &s.wg, func(p pdu.PDU) {
		defer func() { <-s.inbound }()
		s.onPDU(s, p)
	})
	s.lastRead.Store(time.Now().UnixNano())
	return s
}

// bind sends bind_transceiver and waits for its response before anything
// else runs on the connection; the read loop starts only once bound.
func (s *session) bind(ctx context.Context) (string, error) {
	stop := context.AfterFunc(ctx, func() { _ = s.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	_ = s.conn.SetDeadline(time.Now().Add(s.cfg.RequestTimeout))
	defer s.conn.SetDeadline(time.Time{})
	seq := s.nextSeq()
	err := s.write(pdu.PDU{Command: pdu.BindTransceiver, Seq: seq, Body: &pdu.Bind{
		SystemID: s.cfg.SystemID, Password: s.cfg.Password, SystemType: s.cfg.SystemType,
		InterfaceVersion: pdu.InterfaceVersion,
	}})
	if err != nil {
		return "", fmt.Errorf("send bind_transceiver: %w", err)
	}
	for {
		p, err := pdu.ReadPDU(s.br)
		switch {
		case err != nil:
			return "", fmt.Errorf("read bind_transceiver_resp: %w", err)
		case p.Command == pdu.GenericNack && (p.Seq == seq || p.Seq == 0):
			return "", &BindError{Status: p.Status}
		case p.Command == pdu.EnquireLink:
			if err := s.respond(pdu.EnquireLinkResp, pdu.StatusOK, p.Seq, nil); err != nil {
				return "", err
			}
		case p.Command != pdu.BindTransceiverResp || p.Seq != seq:
			s.log.Warn("smpp: PDU before bind_transceiver_resp ignored", "command", p.Command)
		case p.Status != pdu.StatusOK:
			return "", &BindError{Status: p.Status}
		default:
			var sysID string
			if b, ok := p.Body.(*pdu.BindResp); ok {
				sysID = b.SystemID
			}
			return sysID, nil
		}
	}
}

// run starts the read loop and the keep-alive.
func (s *session) run() {
	s.wg.Add(2)
	go func() { defer s.wg.Done(); s.readLoop() }()
	go func() { defer s.wg.Done(); s.keepAlive() }()
}

func (s *session) nextSeq() uint32 {
	// Sequence numbers run from 1 to 0x7FFFFFFF (§5.1.4).
	return s.seq.Add(1)%0x7FFFFFFF + 1
}

func (s *session) readLoop() {
	for {
		p, err := pdu.ReadPDU(s.br)
		if err != nil && !errors.Is(err, pdu.ErrMalformed) {
			s.close(fmt.Errorf("read: %w", err))
			return
		}
		s.lastRead.Store(time.Now().UnixNano())
		if err != nil {
			s.malformed(p, err)
			continue
		}
		s.dispatch(p)
	}
}

// malformed handles a PDU that was framed correctly but did not decode. A
// response still settles its request (it was answered: sending it again
// could duplicate the message); a request is refused with generic_nack.
func (s *session) malformed(p pdu.PDU, err error) {
	s.log.Warn("smpp: malformed PDU", "command", p.Command, "seq", p.Seq, "err", err)
	if p.Command.IsResponse() {
		s.settle(p, fmt.Errorf("%w: %w", errBadResponse, err))
		return
	}
	_ = s.respond(pdu.GenericNack, pdu.StatusInvCmdLen, p.Seq, nil)
}

func (s *session) dispatch(p pdu.PDU) {
	switch {
	case p.Command.IsResponse():
		if p.Command == pdu.SubmitSMResp && p.Status == pdu.StatusOK && s.onTaken != nil {
			if body, ok := p.Body.(*pdu.SMResp); ok && body.MessageID != "" {
				s.onTaken(body.MessageID)
			}
		}
		s.settle(p, nil)
	case p.Command == pdu.EnquireLink:
		_ = s.respond(pdu.EnquireLinkResp, pdu.StatusOK, p.Seq, nil)
	case p.Command == pdu.DeliverSM:
		if !s.takeInbound() {
			return // the session closed while waiting
		}
		s.handlers.Go(p)
	case p.Command == pdu.Unbind:
		_ = s.respond(pdu.UnbindResp, pdu.StatusOK, p.Seq, nil)
		s.close(errUnbound)
	default:
		_ = s.respond(pdu.GenericNack, pdu.StatusInvCmdID, p.Seq, nil)
	}
}

// takeInbound takes an inbound handler's place, waiting (and so not
// reading the socket) while every one is busy; false if the session
// closed meanwhile.
func (s *session) takeInbound() bool {
	select {
	case s.inbound <- struct{}{}:
		return true
	default:
	}
	if s.paused != nil {
		s.paused.Add(1)
	}
	select {
	case s.inbound <- struct{}{}:
		return true
	case <-s.done:
		return false
	}
}

// settle hands a response to the request waiting for it.
func (s *session) settle(p pdu.PDU, err error) {
	s.mu.Lock()
	r, ok := s.pending[p.Seq]
	delete(s.pending, p.Seq)
	s.mu.Unlock()
	if !ok {
		s.log.Warn("smpp: response to no pending request (late, after its timeout?)", "command", p.Command, "seq", p.Seq)
		return
	}
	r.free(s) // first: whoever the reply wakes finds the slot free
	r.ch <- reply{pdu: p, err: err}
}

// forget drops a pending request; false means its response was settled
// meanwhile and is waiting in the channel.
func (s *session) forget(seq uint32) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.pending[seq]
	delete(s.pending, seq)
	if ok {
		r.free(s)
	}
	return ok
}

func (s *session) respond(cmd pdu.CommandID, st pdu.Status, seq uint32, body pdu.Body) error {
	err := s.write(pdu.PDU{Command: cmd, Status: st, Seq: seq, Body: body})
	if err != nil {
		s.log.Warn("smpp: cannot answer", "command", cmd, "seq", seq, "err", err)
	}
	return err
}

func (s *session) write(p pdu.PDU) error {
	b, err := pdu.Encode(p)
	if err != nil {
		return err
	}
	return s.writeRaw(p.Command, b)
}

// writeRaw writes one encoded PDU; a failed write ends the session, since
// the peer may have read part of it and the stream is then out of step.
// Under load many goroutines write at once (submit_sm from every
// hand-over, deliver_sm_resp from every receipt), so they share the
// socket's writes (pdu.Coalescer).
func (s *session) writeRaw(cmd pdu.CommandID, b []byte) error {
	return s.writes.Write(b, func(buf []byte) error {
		_ = s.conn.SetWriteDeadline(time.Now().Add(s.cfg.RequestTimeout))
		if _, err := s.conn.Write(buf); err != nil {
			s.close(fmt.Errorf("write %s: %w", cmd, err))
			return fmt.Errorf("%w: %w", errConnLost, err)
		}
		return nil
	})
}

// callOpts are the ways requests differ: submit_sm uses the window and the
// TPS bucket; control PDUs (enquire_link, unbind) bypass both, so that a
// full window cannot starve the keep-alive.
type callOpts struct {
	window bool
	bucket *bucket
	abort  <-chan struct{} // stops the wait for the response (Close)
}

// call sends a request and waits for its response. Once the request is on
// the wire, ctx no longer cuts the wait short (only the request timeout,
// the end of the connection or o.abort do), so that a cancelled Submit does
// not leave a message in an unknown state that a retry would duplicate.
func (s *session) call(ctx context.Context, cmd pdu.CommandID, body pdu.Body, o callOpts) (pdu.PDU, error) {
	r, err := s.begin(ctx, cmd, body, o, nil)
	if err != nil {
		return pdu.PDU{}, err
	}
	_ = s.writeRaw(cmd, r.encoded) // on failure the session closes and the request gets errConnLost
	t := time.NewTimer(s.cfg.RequestTimeout)
	defer t.Stop()
	return s.await(r, t.C, o.abort)
}

// request is a request registered with its session and encoded, whose
// response settles it: call writes it at once, Submit writes the
// requests of a batch together. Its window slot is freed when it leaves
// pending: when its response comes (before anyone reads it, so that a
// caller still writing a batch is not kept waiting for its own slots),
// when it is forgotten, or when the connection ends.
type request struct {
	seq     uint32
	ch      chan reply
	window  bool // it holds a window slot
	encoded []byte
}

// begin takes a window slot (o.window) and a token of o.bucket, then
// registers the request under a new sequence number and encodes it,
// without writing it. Before it would wait for a slot, it calls unblock
// when set: a caller that holds requests of its own not yet written must
// write them first, since their responses are what frees the window.
func (s *session) begin(ctx context.Context, cmd pdu.CommandID, body pdu.Body, o callOpts, unblock func()) (*request, error) {
	if o.window {
		select {
		case s.window <- struct{}{}:
		default:
			if unblock != nil {
				unblock()
			}
			select {
			case s.window <- struct{}{}:
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-s.done:
				return nil, errNotSent
			}
		}
	}
	r := &request{window: o.window}
	fail := func(err error) (*request, error) {
		r.free(s)
		return nil, err
	}
	if err := o.bucket.take(ctx, s.done); err != nil {
		return fail(err)
	}
	r.seq = s.nextSeq()
	b, err := pdu.Encode(pdu.PDU{Command: cmd, Seq: r.seq, Body: body})
	if err != nil {
		return fail(err)
	}
	r.encoded = b
	r.ch = make(chan reply, 1)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fail(errNotSent)
	}
	s.pending[r.seq] = r
	s.mu.Unlock()
	return r, nil
}

// await waits for the response to a request begun and written, until
// expired or abort closes or fires.
func (s *session) await(r *request, expired <-chan time.Time, abort <-chan struct{}) (pdu.PDU, error) {
	select {
	case rep := <-r.ch:
		return rep.pdu, rep.err
	case <-expired:
	case <-abort:
	}
	if s.forget(r.seq) {
		return pdu.PDU{}, errTimeout
	}
	rep := <-r.ch
	return rep.pdu, rep.err
}

// free gives back the request's window slot; whoever takes it out of
// pending (or never put it there) calls it, once.
func (r *request) free(s *session) {
	if r.window {
		<-s.window
	}
}

// keepAlive sends enquire_link when nothing was received for the interval,
// and drops the connection when it goes unanswered.
func (s *session) keepAlive() {
	iv := s.cfg.EnquireLinkInterval
	t := time.NewTimer(iv)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		idle := time.Since(time.Unix(0, s.lastRead.Load()))
		if idle < iv {
			t.Reset(iv - idle)
			continue
		}
		if _, err := s.call(context.Background(), pdu.EnquireLink, nil, callOpts{abort: s.done}); err != nil {
			s.close(fmt.Errorf("enquire_link: %w", err))
			return
		}
		t.Reset(iv)
	}
}

// unbind says goodbye politely and closes the connection.
func (s *session) unbind(ctx context.Context) {
	if !s.isClosed() {
		if _, err := s.call(ctx, pdu.Unbind, nil, callOpts{abort: ctx.Done()}); err != nil {
			s.log.Info("smpp: unbind not answered", "err", err)
		}
	}
	s.close(errClosed)
}

// close ends the session once; requests still waiting learn that their
// connection was lost.
func (s *session) close(err error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed, s.err = true, err
	pend := s.pending
	s.pending = nil
	s.mu.Unlock()
	close(s.done)
	_ = s.conn.Close()
	for _, r := range pend {
		r.free(s)
		r.ch <- reply{err: errConnLost}
	}
}

func (s *session) isClosed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// cause is why the session ended.
func (s *session) cause() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
