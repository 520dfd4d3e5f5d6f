// Package smpptest is a small SMSC for tests outside package smpp: it binds
// any transceiver, takes submit_sm and reports delivery, and can be made to
// stop answering anything but binds, as a carrier whose platform hangs
// behind a live front end does. (The client's own tests keep a richer fake
// inside package smpp, which cannot be shared without an import cycle.)
package smpptest

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/pdu"
)

// SMSC is a running fake SMSC on a loopback port; it stops when the test
// ends.
type SMSC struct {
	ln           net.Listener
	silent       atomic.Bool
	dropReceipts atomic.Bool
	undeliv      atomic.Bool
	queries      atomic.Int64

	refuse map[string]pdu.Status // by destination: the status submit_sm gets

	mu       sync.Mutex
	conns    []net.Conn
	bound    []*conn // bound transceivers, oldest first: where Deliver writes
	binds    int
	submits  []string // destination of every submit_sm received
	sources  []string // and its source_addr
	answered int
	nextID   int
}

// Start listens on a free loopback port.
func Start(t testing.TB) *SMSC {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &SMSC{ln: ln}
	go s.accept()
	t.Cleanup(s.close)
	return s
}

// Addr is the host:port to bind to.
func (s *SMSC) Addr() string { return s.ln.Addr().String() }

// SetSilent makes the SMSC stop answering (true) or answer again (false).
// Silent, it still accepts connections and answers bind_transceiver, but
// never submit_sm nor enquire_link.
func (s *SMSC) SetSilent(silent bool) { s.silent.Store(silent) }

// SetDropReceipts makes the SMSC take messages without ever sending their
// receipts (a carrier that lost them); query_sm still answers DELIVERED.
func (s *SMSC) SetDropReceipts(drop bool) { s.dropReceipts.Store(drop) }

// SetUndeliverable makes the SMSC take messages and report each one
// undelivered (stat:UNDELIV), as a cheap route that loses traffic does.
func (s *SMSC) SetUndeliverable(u bool) { s.undeliv.Store(u) }

// Refuse makes every submit_sm to dest answered with status (an error
// such as pdu.StatusThrottled or pdu.StatusInvDstAdr), and no receipt.
func (s *SMSC) Refuse(dest string, status pdu.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse == nil {
		s.refuse = map[string]pdu.Status{}
	}
	s.refuse[dest] = status
}

// Queries counts the query_sm answered.
func (s *SMSC) Queries() int { return int(s.queries.Load()) }

// Binds counts the binds answered.
func (s *SMSC) Binds() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.binds
}

// Submits returns the destination of every submit_sm received, answered
// or not, in order.
func (s *SMSC) Submits() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.submits...)
}

// Sources returns the source_addr of every submit_sm received, in the
// order of Submits.
func (s *SMSC) Sources() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sources...)
}

// Answered counts the submit_sm answered (each then reported delivered),
// counting each once its answer has been written.
func (s *SMSC) Answered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.answered
}

// Kill stops the SMSC as its process dying would: the listener closes, so
// new connections are refused, and every open connection drops.
func (s *SMSC) Kill() { s.close() }

func (s *SMSC) close() {
	_ = s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
}

func (s *SMSC) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		go s.serve(&conn{c: c})
	}
}

// conn serialises the PDUs written to one connection.
type conn struct {
	c   net.Conn
	mu  sync.Mutex
	seq uint32
}

func (c *conn) send(p pdu.PDU) {
	b, err := pdu.Encode(p)
	if err != nil {
		panic(fmt.Sprintf("smpptest: encode %v: %v", p.Command, err))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _ = c.c.Write(b)
}

// request sends a PDU of the SMSC's own (deliver_sm).
func (c *conn) request(cmd pdu.CommandID, body pdu.Body) {
	c.mu.Lock()
	c.seq++
	seq := c.seq
	c.mu.Unlock()
	c.send(pdu.PDU{Command: cmd, Seq: seq, Body: body})
}

func (s *SMSC) serve(c *conn) {
	defer c.c.Close()
	for {
		p, err := pdu.ReadPDU(c.c)
		if err != nil {
			return
		}
		switch p.Command {
		case pdu.BindTransceiver:
			s.mu.Lock()
			s.binds++
			s.bound = append(s.bound, c)
			s.mu.Unlock()
			c.send(pdu.PDU{Command: pdu.BindTransceiverResp, Seq: p.Seq, Body: &pdu.BindResp{SystemID: "SMPPTEST"}})
		case pdu.SubmitSM:
			s.submit(c, p)
		case pdu.QuerySM:
			s.query(c, p)
		case pdu.EnquireLink:
			if !s.silent.Load() {
				c.send(pdu.PDU{Command: pdu.EnquireLinkResp, Seq: p.Seq})
			}
		case pdu.Unbind:
			c.send(pdu.PDU{Command: pdu.UnbindResp, Seq: p.Seq})
			return
		}
	}
}

// submit records a submit_sm and, unless silent, takes it and reports it
// delivered.
func (s *SMSC) submit(c *conn, p pdu.PDU) {
	sm, _ := p.Body.(*pdu.SM)
	dest, src := "", ""
	if sm != nil {
		dest, src = sm.DestAddr, sm.SourceAddr
	}
	s.mu.Lock()
	s.submits = append(s.submits, dest)
	s.sources = append(s.sources, src)
	silent := s.silent.Load()
	refused, isRefused := s.refuse[dest]
	if isRefused && !silent {
		s.mu.Unlock()
		c.send(pdu.PDU{Command: pdu.SubmitSMResp, Status: refused, Seq: p.Seq})
		return
	}
	if !silent {
		s.nextID++
	}
	id := fmt.Sprintf("T%d", s.nextID)
	s.mu.Unlock()
	if silent {
		return
	}
	c.send(pdu.PDU{Command: pdu.SubmitSMResp, Seq: p.Seq, Body: &pdu.SMResp{MessageID: id}})
	// Counted only once the answer is on the wire: a test that kills the
	// SMSC after Answered reached n must not cut off the n-th answer, or
	// the client rightly sends that message again elsewhere.
	s.mu.Lock()
	s.answered++
	s.mu.Unlock()
	if s.dropReceipts.Load() {
		return
	}
	now := time.Now().UTC().Format("0601021504")
	dlvrd, stat, state := "001", "DELIVRD", pdu.StateDelivered
	if s.undeliv.Load() {
		dlvrd, stat, state = "000", "UNDELIV", pdu.StateUndeliverable
	}
	text := fmt.Sprintf("id:%s sub:001 dlvrd:%s submit date:%s done date:%s stat:%s err:000 text:", id, dlvrd, now, now, stat)
	c.request(pdu.DeliverSM, &pdu.SM{SourceTON: pdu.TONInternational, SourceNPI: pdu.NPIISDN, SourceAddr: dest,
		ESMClass: pdu.ESMClassReceipt, ShortMessage: []byte(text),
		TLVs: pdu.TLVs{pdu.StringTLV(pdu.TagReceiptedMessageID, id), pdu.ByteTLV(pdu.TagMessageState, byte(state))}})
}

// query answers query_sm: DELIVERED for an id this SMSC gave, else
// ESME_RQUERYFAIL.
func (s *SMSC) query(c *conn, p pdu.PDU) {
	if s.silent.Load() {
		return
	}
	q, _ := p.Body.(*pdu.Query)
	s.mu.Lock()
	known := false
	if q != nil {
		var n int
		_, err := fmt.Sscanf(q.MessageID, "T%d", &n)
		known = err == nil && n >= 1 && n <= s.nextID
	}
	s.mu.Unlock()
	s.queries.Add(1)
	if !known {
		c.send(pdu.PDU{Command: pdu.QuerySMResp, Status: pdu.StatusQueryFail, Seq: p.Seq})
		return
	}
	c.send(pdu.PDU{Command: pdu.QuerySMResp, Seq: p.Seq, Body: &pdu.QueryResp{MessageID: q.MessageID,
		FinalDate: time.Now().UTC().Format("060102150405") + "000+", MessageState: pdu.StateDelivered}})
}

// Deliver sends a mobile-originated message (a deliver_sm of the given
// addresses, their types of number and the text as GSM) over the most
// recent bind; false when nothing is bound. It does not wait for the
// answer: the test watches for what the message changed.
func (s *SMSC) Deliver(from string, fromTON byte, to string, toTON byte, text string) bool {
	s.mu.Lock()
	var c *conn
	if n := len(s.bound); n > 0 {
		c = s.bound[n-1]
	}
	s.mu.Unlock()
	if c == nil {
		return false
	}
	c.request(pdu.DeliverSM, &pdu.SM{SourceTON: fromTON, SourceNPI: pdu.NPIISDN, SourceAddr: from,
		DestTON: toTON, DestNPI: pdu.NPIISDN, DestAddr: to, ShortMessage: []byte(text)})
	return true
}
