package smpp

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"testing"

	"github.com/msgsvc/msgsvc/internal/pdu"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// writeLog records, for every write the client makes to its connection,
// how many submit_sm PDUs it carried.
type writeLog struct {
	mu     sync.Mutex
	writes []int
}

func (l *writeLog) dialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &loggedConn{Conn: c, log: l}, nil
	}
}

// submits lists the writes that carried submit_sm, by how many each did.
func (l *writeLog) submits() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []int
	for _, n := range l.writes {
		if n > 0 {
			out = append(out, n)
		}
	}
	return out
}

type loggedConn struct {
	net.Conn
	log *writeLog
}

func (c *loggedConn) Write(b []byte) (int, error) {
	n := 0
	for rest := b; len(rest) >= 16; {
		size := int(binary.BigEndian.Uint32(rest[0:4]))
		if size < 16 || size > len(rest) {
			break
		}
		if pdu.CommandID(binary.BigEndian.Uint32(rest[4:8])) == pdu.SubmitSM {
			n++
		}
		rest = rest[size:]
	}
	c.log.mu.Lock()
	c.log.writes = append(c.log.writes, n)
	c.log.mu.Unlock()
	return c.Conn.Write(b)
}

func batchOf(n int) []provider.Outbound {
	msgs := make([]provider.Outbound, n)
	for i := range msgs {
		msgs[i] = outSMS(fmt.Sprintf("m%d", i), "5511999990000", fmt.Sprintf("message %d", i))
	}
	return msgs
}

// A batch that fits in the window goes to the SMSC in one write, where a
// goroutine a message wrote at least twice (the first alone).
func TestBatchWrittenInOneWrite(t *testing.T) {
	f := newFakeSMSC(t)
	var log writeLog
	c := startClient(t, testConfig(f.addr()), newSink(), WithDialer(log.dialer()))
	res := submit(t, c, batchOf(8)...)
	mustOK(t, res)
	if got := log.submits(); len(got) != 1 || got[0] != 8 {
		t.Fatalf("submit_sm per write: %v; want the batch of 8 in one write", got)
	}
	seen := map[string]bool{}
	for i, r := range res {
		if seen[r.Ref] {
			t.Fatalf("result %d repeats the SMSC's id %s: %+v", i, r.Ref, res)
		}
		seen[r.Ref] = true
	}
	for i, s := range f.submitList() {
		if got, want := string(s.sm.ShortMessage), fmt.Sprintf("message %d", i); got != want {
			t.Fatalf("submit %d carried %q; want the batch's order (%q)", i, got, want)
		}
	}
}

// A batch larger than the window is written in turns as responses free
// the window's slots: a batch that held its slots until it read its
// responses would wait for itself.
func TestBatchLargerThanTheWindow(t *testing.T) {
	f := newFakeSMSC(t)
	cfg := testConfig(f.addr())
	cfg.Window = 3
	var log writeLog
	c := startClient(t, cfg, newSink(), WithDialer(log.dialer()))
	mustOK(t, submit(t, c, batchOf(20)...))
	if n := len(f.submitList()); n != 20 {
		t.Fatalf("the SMSC took %d submits; want 20", n)
	}
	total := 0
	for _, n := range log.submits() {
		if n > cfg.Window {
			t.Fatalf("submit_sm per write: %v; want none above the window of %d", log.submits(), cfg.Window)
		}
		total += n
	}
	if total != 20 {
		t.Fatalf("submit_sm per write: %v; want 20 in all", log.submits())
	}
}
