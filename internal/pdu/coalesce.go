package pdu

import "sync"

// Coalescer lets concurrent writers of PDUs to one connection share its
// writes. A write to a socket is a system call that costs far more than
// the copy of a PDU, and under load many goroutines write at once: a
// caller that finds a write under way queues its bytes for the next one
// and waits for it, and the caller that writes takes everything queued
// meanwhile, until nothing is. Alone, a PDU is written at once. The zero
// value is ready to use.
type Coalescer struct {
	mu      sync.Mutex
	writing bool            // a caller is writing for everyone
	next    *coalescedWrite // the write the queued bytes go out with
	buf     []byte          // bytes waiting for the next write
	spare   []byte          // the buffer of the last write, to reuse
}

// coalescedWrite is one write of the bytes queued for it; done closes
// when it ended.
type coalescedWrite struct {
	done chan struct{}
	err  error
}

// Write queues b and returns once a write that carried it has ended, with
// that write's error: a failed write fails every PDU it carried. write is
// called by one caller at a time, with everything queued.
func (c *Coalescer) Write(b []byte, write func([]byte) error) error {
	c.mu.Lock()
	if c.next == nil {
		c.next = &coalescedWrite{done: make(chan struct{})}
	}
	mine := c.next
	c.buf = append(c.buf, b...)
	if c.writing {
		c.mu.Unlock()
		<-mine.done
		return mine.err
	}
	c.writing = true
	for {
		w, buf := c.next, c.buf
		c.next, c.buf = nil, c.spare[:0]
		c.mu.Unlock()
		w.err = write(buf)
		close(w.done)
		c.mu.Lock()
		c.spare = buf
		if c.next == nil {
			c.writing = false
			c.mu.Unlock()
			return mine.err
		}
	}
}
