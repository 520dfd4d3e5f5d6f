//go:build unix

package webhook

import "syscall"

// alive tells whether an idle connection can carry a request: a peek at
// its socket, which does not wait, finds nothing to read. End of file
// means the receiver closed it; bytes mean it sent something unasked,
// which would be taken for the next answer.
func (c *senderConn) alive() bool {
	if c.raw == nil {
		return true
	}
	ok := false
	err := c.raw.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		ok = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && ok
}
