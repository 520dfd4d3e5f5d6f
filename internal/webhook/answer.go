package webhook

import (
	"bufio"
	"bytes"
)

// plainAnswer reads the answer nearly every receiver gives, without
// net/http's parser: HTTP/1.1, a final status of 200 to 599, a
// Content-Length and no transfer coding, its head and body already whole
// in br's buffer. http.ReadResponse builds a Response, a header map with
// a string for every name and value, and a body reader for that; on a
// node posting two webhooks a message it was about 3 % of the CPU.
//
// Anything else (an interim or bodiless status, chunks, an answer split
// over reads, a line net/http would refuse) gives ok false with nothing
// consumed, and the caller reads it with http.ReadResponse; so does an
// error before the first byte, which ReadResponse then reports. When ok,
// the answer is what the slow path makes of the same bytes: the status,
// at most responseSnippet bytes of the body (copied), and whether the
// connection can carry another request (FuzzPlainAnswer checks this).
func plainAnswer(br *bufio.Reader) (a Answer, keep, ok bool) {
	if _, err := br.Peek(1); err != nil {
		return Answer{}, false, false
	}
	buf, _ := br.Peek(br.Buffered())
	end := bytes.Index(buf, []byte("\r\n\r\n"))
	if end < 0 {
		return Answer{}, false, false
	}
	lines := buf[:end+2] // each line ends in CRLF
	line, lines := cutLine(lines)
	status, good := statusLine(line)
	if !good {
		return Answer{}, false, false
	}
	length, closing := int64(-1), false
	for len(lines) > 0 {
		line, lines = cutLine(lines)
		name, value, good := headerLine(line)
		if !good {
			return Answer{}, false, false
		}
		switch {
		case asciiEqualFold(name, "content-length"):
			n, good := digits(value)
			if !good || length >= 0 {
				return Answer{}, false, false
			}
			length = n
		case asciiEqualFold(name, "transfer-encoding"):
			return Answer{}, false, false
		case asciiEqualFold(name, "connection"):
			closing = closing || hasCloseToken(value)
		}
	}
	bodyAt := end + 4
	if length < 0 || length > int64(len(buf)-bodyAt) {
		return Answer{}, false, false
	}
	body := buf[bodyAt : bodyAt+int(length)]
	a.Status = status
	a.Head = append(make([]byte, 0, min(len(body), responseSnippet)), body[:min(len(body), responseSnippet)]...)
	_, _ = br.Discard(bodyAt + int(length))
	return a, !closing && br.Buffered() == 0, true
}

// cutLine splits off the first CRLF-ended line of b.
func cutLine(b []byte) (line, rest []byte) {
	i := bytes.Index(b, []byte("\r\n"))
	return b[:i], b[i+2:]
}

// statusLine reads "HTTP/1.1 NNN reason" for a final status with a body:
// 200 to 599, but 204 and 304, which have none whatever they say.
func statusLine(line []byte) (int, bool) {
	const proto = "HTTP/1.1 "
	if len(line) < len(proto)+3 || string(line[:len(proto)]) != proto {
		return 0, false
	}
	code := line[len(proto) : len(proto)+3]
	if len(line) > len(proto)+3 && line[len(proto)+3] != ' ' {
		return 0, false
	}
	for _, c := range line[len(proto)+3:] {
		if c < ' ' && c != '\t' || c == 0x7f {
			return 0, false
		}
	}
	n := 0
	for _, c := range code {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if n < 200 || n > 599 || n == 204 || n == 304 {
		return 0, false
	}
	return n, true
}

// headerLine splits "Name: value" when net/http would take it as it is:
// the name a token, the value free of control characters; a line folded
// onto the one before is not taken.
func headerLine(line []byte) (name, value []byte, ok bool) {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return nil, nil, false
	}
	name = line[:colon]
	for _, c := range name {
		if !isTokenByte(c) {
			return nil, nil, false
		}
	}
	value = line[colon+1:]
	for _, c := range value {
		if c < ' ' && c != '\t' || c == 0x7f {
			return nil, nil, false
		}
	}
	return name, bytes.Trim(value, " \t"), true
}

// isTokenByte says whether c may be in a header name (RFC 9110's tchar).
func isTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0
}

// digits reads a Content-Length: decimal digits only, at most 18 of them.
func digits(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// hasCloseToken says whether a Connection value lists "close".
func hasCloseToken(v []byte) bool {
	for len(v) > 0 {
		tok := v
		if i := bytes.IndexByte(v, ','); i >= 0 {
			tok, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		if asciiEqualFold(bytes.Trim(tok, " \t"), "close") {
			return true
		}
	}
	return false
}

// asciiEqualFold compares b with lower, an ASCII lower-case word.
func asciiEqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
