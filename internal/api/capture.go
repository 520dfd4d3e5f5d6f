package api

import (
	"bytes"
	"io"
	"net/http"
)

// captureWriter keeps a copy of a response so it can be replayed.
type captureWriter struct {
	http.ResponseWriter
	status int
	body   []byte
}

func (c *captureWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.body = append(c.body, b...)
	return c.ResponseWriter.Write(b)
}

func newBody(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }
