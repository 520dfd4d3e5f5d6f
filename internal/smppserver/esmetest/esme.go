// Package esmetest is a scripted ESME for tests of the SMPP server: it
// writes PDUs with the codec of msgsvc's own SMPP client and reads the
// answers one by one, so a test asserts every command_status on the wire.
package esmetest

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	smpp "github.com/msgsvc/msgsvc/internal/pdu"
)

// ESME is one connection to an SMPP server.
type ESME struct {
	t    testing.TB
	Conn net.Conn
	seq  uint32
	// Delivered collects the deliver_sm read while waiting for responses.
	Delivered []smpp.PDU
	// AutoAck answers every deliver_sm read with deliver_sm_resp OK.
	AutoAck bool
	// early keeps responses read while waiting for another.
	early map[uint32]smpp.PDU
}

// Dial connects to addr; tlsCfg non-nil speaks TLS.
func Dial(t testing.TB, addr string, tlsCfg *tls.Config) *ESME {
	t.Helper()
	var c net.Conn
	var err error
	if tlsCfg != nil {
		c, err = tls.Dial("tcp", addr, tlsCfg)
	} else {
		c, err = net.Dial("tcp", addr)
	}
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	e := &ESME{t: t, Conn: c, AutoAck: true, early: map[uint32]smpp.PDU{}}
	t.Cleanup(func() { c.Close() })
	return e
}

// Send writes a request and returns its sequence number.
func (e *ESME) Send(cmd smpp.CommandID, body smpp.Body) uint32 {
	e.t.Helper()
	e.seq++
	e.Write(smpp.PDU{Command: cmd, Seq: e.seq, Body: body})
	return e.seq
}

// Write writes one PDU.
func (e *ESME) Write(p smpp.PDU) {
	e.t.Helper()
	b, err := smpp.Encode(p)
	if err != nil {
		e.t.Fatalf("encode %s: %v", p.Command, err)
	}
	e.WriteRaw(b)
}

// WriteRaw writes octets as they are.
func (e *ESME) WriteRaw(b []byte) {
	e.t.Helper()
	if _, err := e.Conn.Write(b); err != nil {
		e.t.Fatalf("write: %v", err)
	}
}

// Read reads the next PDU within 10 s; err is the read's error.
func (e *ESME) Read() (smpp.PDU, error) {
	_ = e.Conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	return smpp.ReadPDU(e.Conn)
}

// Response reads until the response to seq (or a generic_nack) comes,
// keeping the deliver_sm read meanwhile (answered when AutoAck) and the
// responses to other requests.
func (e *ESME) Response(seq uint32) smpp.PDU {
	e.t.Helper()
	if p, ok := e.early[seq]; ok {
		delete(e.early, seq)
		return p
	}
	for {
		p, err := e.Read()
		if err != nil {
			e.t.Fatalf("waiting for the response to %d: %v", seq, err)
		}
		if p.Command == smpp.DeliverSM {
			e.Delivered = append(e.Delivered, p)
			if e.AutoAck {
				e.Write(smpp.PDU{Command: smpp.DeliverSMResp, Seq: p.Seq, Body: &smpp.SMResp{}})
			}
			continue
		}
		if p.Command == smpp.EnquireLink {
			e.Write(smpp.PDU{Command: smpp.EnquireLinkResp, Seq: p.Seq})
			continue
		}
		if p.Seq == seq || p.Command == smpp.GenericNack {
			return p
		}
		e.early[p.Seq] = p
	}
}

// Call sends a request and returns its response.
func (e *ESME) Call(cmd smpp.CommandID, body smpp.Body) smpp.PDU {
	e.t.Helper()
	return e.Response(e.Send(cmd, body))
}

// Bind binds as kind (BindTransmitter, BindReceiver, BindTransceiver)
// and returns the response's status.
func (e *ESME) Bind(kind smpp.CommandID, systemID, password string) smpp.Status {
	e.t.Helper()
	return e.Call(kind, &smpp.Bind{SystemID: systemID, Password: password, InterfaceVersion: smpp.InterfaceVersion}).Status
}

// Submit sends a submit_sm of text in GSM 03.38 and returns the response.
func (e *ESME) Submit(from, to, text string, registered byte) smpp.PDU {
	e.t.Helper()
	return e.Call(smpp.SubmitSM, &smpp.SM{SourceAddr: from, DestTON: smpp.TONInternational, DestNPI: smpp.NPIISDN,
		DestAddr: to, RegisteredDelivery: registered, ShortMessage: []byte(text)})
}

// WaitDelivered reads until n deliver_sm were collected, answering them
// when AutoAck, within 10 s per PDU.
func (e *ESME) WaitDelivered(n int) []smpp.PDU {
	e.t.Helper()
	for len(e.Delivered) < n {
		p, err := e.Read()
		if err != nil {
			e.t.Fatalf("waiting for deliver_sm %d of %d: %v", len(e.Delivered)+1, n, err)
		}
		switch p.Command {
		case smpp.DeliverSM:
			e.Delivered = append(e.Delivered, p)
			if e.AutoAck {
				e.Write(smpp.PDU{Command: smpp.DeliverSMResp, Seq: p.Seq, Body: &smpp.SMResp{}})
			}
		case smpp.EnquireLink:
			e.Write(smpp.PDU{Command: smpp.EnquireLinkResp, Seq: p.Seq})
		}
	}
	return e.Delivered
}

// Close unbinds politely and closes.
func (e *ESME) Close() {
	e.seq++
	b, _ := smpp.Encode(smpp.PDU{Command: smpp.Unbind, Seq: e.seq})
	_, _ = e.Conn.Write(b)
	e.Conn.Close()
}

// DialFrom connects to addr from the local address from (a loopback
// address such as 127.0.0.2), so that a test can be several clients.
func DialFrom(t testing.TB, addr, from string) *ESME {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, from, err)
	}
	e := &ESME{t: t, Conn: c, AutoAck: true, early: map[uint32]smpp.PDU{}}
	t.Cleanup(func() { c.Close() })
	return e
}
