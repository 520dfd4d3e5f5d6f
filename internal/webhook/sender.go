package webhook

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Sender posts webhooks over HTTP/1.1 on keep-alive connections that it
// pools itself, one request at a time per connection.
//
// A webhook is one small POST whose answer is read and mostly thrown
// away. net/http's client hands every request to two goroutines of its
// connection (one writes, one reads) and to a third that watches for
// cancellation, copies headers into maps and back, and wraps the body;
// with two webhooks per message that was a tenth of a node's CPU. Here
// the posting goroutine writes the request in one write and reads the
// answer itself, under one deadline. HTTP/2 is not spoken: receivers get
// up to MaxConnsPerHost HTTP/1.1 connections instead.
//
// Like NewClient's client it uses no proxy, follows no redirect (a 3xx is
// the answer), and, unless AllowPrivate, refuses at connect time any
// address that is not public.
type Sender struct {
	timeout time.Duration
	perHost int
	idleFor time.Duration
	maxIdle int
	ua      string
	dialer  *net.Dialer
	tls     *tls.Config
	// now is the wall clock, never an injected one: deadlines and idle
	// times are the sockets' own.
	now      func() time.Time
	mu       sync.Mutex
	hosts    map[string]*hostConns
	idle     int  // idle connections across all hosts
	sweeping bool // a sweep of expired idle connections is scheduled
}

// hostConns is one receiver's (scheme, host and port) share of the pool.
type hostConns struct {
	// slots holds a token for every connection in use or being dialled,
	// so that at most perHost are open to the receiver at once.
	slots chan struct{}
	idle  []*senderConn // most recently used last
	posts int           // posts under way, which hold this entry in the map
}

type senderConn struct {
	conn      net.Conn
	raw       syscall.RawConn // the socket under conn (and under TLS), or nil
	br        *bufio.Reader
	in        budgetReader
	buf       []byte // the request being written
	idleSince time.Time
}

// budgetReader bounds what one answer may make us read: headers, the
// kept part of the body and what is drained after it.
type budgetReader struct {
	r    io.Reader
	left int64
}

var errAnswerTooLarge = errors.New("webhook: receiver's answer is too large")

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errAnswerTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

const (
	// drainLimit is how much of an answer beyond the kept snippet is read
	// so that its connection can carry the next request; a receiver that
	// answers with more loses its connection instead.
	drainLimit = 64 << 10
	// answerBudget bounds one answer: headers, snippet and drain.
	answerBudget = maxResponseHeaderBytes + responseSnippet + drainLimit
)

// SenderOptions configures NewSender: ClientOptions' settings, and the
// roots to trust for https receivers.
type SenderOptions struct {
	ClientOptions
	// RootCAs, if set, replaces the system's roots (tests, private CAs).
	RootCAs *x509.CertPool
}

// NewSender returns a Sender with o's settings.
func NewSender(o SenderOptions) *Sender {
	o.ClientOptions = o.withDefaults()
	return &Sender{
		timeout: o.Timeout, perHost: o.MaxConnsPerHost, idleFor: idleConnTimeout,
		maxIdle: max(maxIdleConns, o.MaxConnsPerHost), ua: o.UserAgent, dialer: o.dialer(), now: time.Now,
		tls:   &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: o.RootCAs, NextProtos: []string{"http/1.1"}},
		hosts: map[string]*hostConns{},
	}
}

// Header is one request header the caller adds.
type Header struct{ Name, Value string }

// Answer is a receiver's answer: its status and the start of its body.
type Answer struct {
	Status int
	Head   []byte // at most responseSnippet bytes
}

// Post sends body to rawURL as application/json with the given headers
// and returns the answer. The whole attempt, from waiting for a
// connection to the answer's last byte, is bounded by the timeout. A
// pooled connection is checked before use: one the receiver closed (or
// sent something unasked on) is dropped. A request whose pooled
// connection broke while it was being written is sent once more on a new
// connection; once written, a request is never sent again here: a
// connection that then breaks is a failed attempt, retried on the
// schedule like any other.
func (s *Sender) Post(ctx context.Context, rawURL string, headers []Header, body []byte) (Answer, error) {
	return s.Send(ctx, Request{URL: rawURL, Headers: headers, Body: body})
}

// Request is one request a Sender makes: Post's JSON, or a form
// (Twilio's callbacks), posted or sent as a GET.
type Request struct {
	Method      string // POST when ""; GET sends no body
	URL         string
	ContentType string // application/json when ""
	Headers     []Header
	Body        []byte
}

// Send makes the request r as Post does.
func (s *Sender) Send(ctx context.Context, r Request) (Answer, error) {
	deadline := s.now().Add(s.timeout)
	switch r.Method {
	case "":
		r.Method = http.MethodPost
	case http.MethodPost, http.MethodGet:
	default:
		return Answer{}, fmt.Errorf("webhook: unsupported method %q", r.Method)
	}
	if r.ContentType == "" {
		r.ContentType = "application/json"
	}
	if strings.ContainsAny(r.ContentType, "\r\n") {
		return Answer{}, errors.New("webhook: invalid content type")
	}
	t, err := parseTarget(r.URL)
	if err != nil {
		return Answer{}, err
	}
	for _, h := range r.Headers {
		if strings.ContainsAny(h.Name, "\r\n: ") || strings.ContainsAny(h.Value, "\r\n") {
			return Answer{}, fmt.Errorf("webhook: invalid header %q", h.Name)
		}
	}
	hc := s.host(t.key)
	defer s.release(hc)
	if err := s.acquire(ctx, hc, deadline); err != nil {
		return Answer{}, err
	}
	defer func() { <-hc.slots }()
	c := s.takeIdle(hc)
	reused := c != nil
	for {
		if c == nil {
			if c, err = s.dial(ctx, t, deadline); err != nil {
				return Answer{}, err
			}
		}
		a, keep, unsent, err := s.roundTrip(ctx, c, t, &r, deadline)
		if keep {
			c.idleSince = s.now()
			s.putIdle(hc, c)
		} else {
			_ = c.conn.Close()
		}
		if err != nil && unsent && reused && ctx.Err() == nil && s.now().Before(deadline) {
			// The pooled connection broke before the request was
			// written whole, so the receiver cannot have acted on it:
			// once more, on a new connection.
			c, reused = nil, false
			continue
		}
		return a, err
	}
}

type target struct {
	key, scheme, hostport, serverName, host, path string
}

func parseTarget(rawURL string) (target, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return target{}, fmt.Errorf("webhook: invalid URL: %w", err)
	}
	var port string
	switch u.Scheme {
	case "http":
		port = "80"
	case "https":
		port = "443"
	default:
		return target{}, fmt.Errorf("webhook: unsupported URL scheme %q", u.Scheme)
	}
	if u.Hostname() == "" {
		return target{}, errors.New("webhook: URL has no host")
	}
	if u.User != nil {
		// Callback URLs are refused with user info when they are set.
		return target{}, errors.New("webhook: URL must not contain user info")
	}
	if p := u.Port(); p != "" {
		port = p
	}
	hp := net.JoinHostPort(u.Hostname(), port)
	return target{key: u.Scheme + "://" + hp, scheme: u.Scheme, hostport: hp, serverName: u.Hostname(),
		host: u.Host, path: u.RequestURI()}, nil
}

func (s *Sender) host(key string) *hostConns {
	s.mu.Lock()
	defer s.mu.Unlock()
	hc := s.hosts[key]
	if hc == nil {
		hc = &hostConns{slots: make(chan struct{}, s.perHost)}
		s.hosts[key] = hc
	}
	hc.posts++
	return hc
}

// release ends a post's hold on its receiver's entry; the sweep removes
// entries that no post holds and that have no idle connection.
func (s *Sender) release(hc *hostConns) {
	s.mu.Lock()
	hc.posts--
	s.mu.Unlock()
}

// acquire waits for a connection slot to the receiver, until ctx ends or
// the attempt's deadline passes.
func (s *Sender) acquire(ctx context.Context, hc *hostConns, deadline time.Time) error {
	select {
	case hc.slots <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(deadline.Sub(s.now()))
	defer t.Stop()
	select {
	case hc.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("webhook: no connection to the receiver free before the attempt's %v deadline exceeded: %w", s.timeout, errTimeout)
	}
}

// errTimeout is a net.Error that says it is a timeout, like a deadline
// passing on a connection.
var errTimeout error = timeoutError{}

type timeoutError struct{}

func (timeoutError) Error() string   { return "timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// takeIdle takes the receiver's most recently used idle connection that
// is still fit to carry a request, closing those that are not. The check
// is a system call, made outside the pool's lock.
func (s *Sender) takeIdle(hc *hostConns) *senderConn {
	for {
		s.mu.Lock()
		n := len(hc.idle)
		if n == 0 {
			s.mu.Unlock()
			return nil
		}
		c := hc.idle[n-1]
		hc.idle[n-1] = nil
		hc.idle = hc.idle[:n-1]
		s.idle--
		s.mu.Unlock()
		if s.now().Sub(c.idleSince) < s.idleFor && c.alive() {
			return c
		}
		_ = c.conn.Close()
	}
}

func (s *Sender) putIdle(hc *hostConns, c *senderConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle >= s.maxIdle || len(hc.idle) >= s.perHost {
		_ = c.conn.Close()
		return
	}
	hc.idle = append(hc.idle, c)
	s.idle++
	if !s.sweeping {
		s.sweeping = true
		time.AfterFunc(s.idleFor, s.sweep)
	}
}

// sweep closes connections idle for longer than the idle timeout, so that
// receivers posted to once do not keep a socket open here for good.
func (s *Sender) sweep() {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, hc := range s.hosts {
		kept := hc.idle[:0]
		for _, c := range hc.idle {
			if now.Sub(c.idleSince) < s.idleFor {
				kept = append(kept, c)
				continue
			}
			_ = c.conn.Close()
			s.idle--
		}
		clear(hc.idle[len(kept):])
		hc.idle = kept
		if len(hc.idle) == 0 && hc.posts == 0 {
			delete(s.hosts, key)
		}
	}
	s.sweeping = s.idle > 0
	if s.sweeping {
		time.AfterFunc(s.idleFor, s.sweep)
	}
}

// CloseIdleConnections closes every pooled connection not in use.
func (s *Sender) CloseIdleConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, hc := range s.hosts {
		for i, c := range hc.idle {
			_ = c.conn.Close()
			hc.idle[i] = nil
		}
		s.idle -= len(hc.idle)
		hc.idle = hc.idle[:0]
	}
}

func (s *Sender) dial(ctx context.Context, t target, deadline time.Time) (*senderConn, error) {
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	raw, err := s.dialer.DialContext(dctx, "tcp", t.hostport)
	if err != nil {
		return nil, s.failed(ctx, "connect", err)
	}
	conn := raw
	if t.scheme == "https" {
		cfg := s.tls.Clone()
		cfg.ServerName = t.serverName
		tc := tls.Client(raw, cfg)
		if err := tc.HandshakeContext(dctx); err != nil {
			_ = raw.Close()
			return nil, s.failed(ctx, "TLS handshake", err)
		}
		conn = tc
	}
	c := &senderConn{conn: conn, buf: make([]byte, 0, 1024)}
	if sc, ok := raw.(syscall.Conn); ok {
		c.raw, _ = sc.SyscallConn()
	}
	c.in.r = conn
	c.br = bufio.NewReaderSize(&c.in, 4096)
	return c, nil
}

// roundTrip writes the request and reads the answer on c. keep says
// whether c may carry another request, unsent that the request was not
// written whole.
func (s *Sender) roundTrip(ctx context.Context, c *senderConn, t target, r *Request, deadline time.Time) (a Answer, keep, unsent bool, err error) {
	if err := c.conn.SetDeadline(deadline); err != nil {
		return Answer{}, false, true, fmt.Errorf("webhook: %w", err)
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Unix(1, 0)) })
		defer func() {
			if !stop() {
				keep = false // the deadline was moved, or is being moved: never reuse
			}
		}()
	}
	c.in.left = answerBudget

	b := append(c.buf[:0], r.Method...)
	b = append(b, ' ')
	b = append(b, t.path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, t.host...)
	if s.ua != "" {
		b = append(b, "\r\nUser-Agent: "...)
		b = append(b, s.ua...)
	}
	body := r.Body
	if r.Method == http.MethodGet {
		body = nil
	} else {
		b = append(b, "\r\nContent-Type: "...)
		b = append(b, r.ContentType...)
		b = append(b, "\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
	}
	for _, h := range r.Headers {
		b = append(b, "\r\n"...)
		b = append(b, h.Name...)
		b = append(b, ": "...)
		b = append(b, h.Value...)
	}
	b = append(b, "\r\n\r\n"...)
	b = append(b, body...)
	c.buf = b
	if _, err := c.conn.Write(b); err != nil {
		return Answer{}, false, true, s.failed(ctx, "send", err)
	}

	if a, keep, ok := plainAnswer(c.br); ok {
		return a, keep, false, nil
	}
	a, keep, err = readAnswer(c.br)
	if err != nil {
		return Answer{}, false, false, s.failed(ctx, "read the answer", err)
	}
	return a, keep, false, nil
}

// readAnswer reads any answer with net/http's parser: the status, at most
// responseSnippet bytes of its body, and whether the connection can carry
// another request. err is for an answer that could not be read at all.
func readAnswer(br *bufio.Reader) (a Answer, keep bool, err error) {
	resp, err := http.ReadResponse(br, nil)
	// 1xx answers are interim; 101 would switch protocols, which a
	// webhook never asked for.
	for err == nil && resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
		resp, err = http.ReadResponse(br, nil)
	}
	if err != nil {
		return Answer{}, false, err
	}
	a.Status = resp.StatusCode
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return a, false, nil
	}
	// The status is the answer even if the body then breaks off; only a
	// body read to its end leaves the connection fit for another request.
	a.Head, err = io.ReadAll(io.LimitReader(resp.Body, responseSnippet))
	if err != nil {
		return a, false, nil
	}
	more, err := io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit+1))
	if err != nil || more > drainLimit {
		return a, false, nil
	}
	// A receiver that asked to close, or sent more than its answer, gets
	// no further request on this connection.
	return a, !resp.Close && br.Buffered() == 0, nil
}

// failed words a connection error for the attempt log: a cancelled ctx
// is said as such, and a deadline that passed as the timeout it was.
func (s *Sender) failed(ctx context.Context, what string, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("webhook: %s: %w", what, ctx.Err())
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("webhook: %s: timed out, the attempt's %v deadline exceeded: %w", what, s.timeout, err)
	}
	return fmt.Errorf("webhook: %s: %w", what, err)
}
