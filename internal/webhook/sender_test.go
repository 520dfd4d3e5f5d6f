package webhook

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countConns makes srv count the connections it accepts.
func countConns(srv *httptest.Server) *atomic.Int32 {
	var n atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	return &n
}

func privateSender(o ClientOptions) *Sender {
	o.AllowPrivate = true
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Second
	}
	return NewSender(SenderOptions{ClientOptions: o})
}

func TestSenderPostsAndReusesConnections(t *testing.T) {
	type seen struct {
		method, path, ua, ctype, id, sig, body string
		length                                 int64
	}
	got := make(chan seen, 2)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.URL.RequestURI(), r.UserAgent(), r.Header.Get("Content-Type"), r.Header.Get("webhook-id"),
			r.Header.Get("webhook-signature"), string(b), r.ContentLength}
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "thanks")
	}))
	conns := countConns(srv)
	srv.Start()
	defer srv.Close()

	s := privateSender(ClientOptions{UserAgent: "msgsvc-webhooks/1"})
	for i := range 2 {
		a, err := s.Post(t.Context(), srv.URL+"/hooks/a?x=1", []Header{{"webhook-id", "evt_1"}, {"webhook-signature", "v1,abc"}},
			[]byte(`{"n":1}`))
		if err != nil {
			t.Fatal(err)
		}
		if a.Status != http.StatusAccepted || string(a.Head) != "thanks" {
			t.Fatalf("post %d: answer %d %q, want 202 thanks", i, a.Status, a.Head)
		}
		want := seen{"POST", "/hooks/a?x=1", "msgsvc-webhooks/1", "application/json", "evt_1", "v1,abc", `{"n":1}`, 7}
		if g := <-got; g != want {
			t.Fatalf("post %d: receiver saw %+v, want %+v", i, g, want)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for two posts, want one kept alive", n)
	}
}

func TestSenderRefusesPrivateDial(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()

	s := NewSender(SenderOptions{ClientOptions: ClientOptions{Timeout: 2 * time.Second}})
	_, err := s.Post(t.Context(), srv.URL, nil, []byte(`{}`))
	if !errors.Is(err, ErrNotPublic) || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("error = %v, want ErrNotPublic naming 127.0.0.1", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("server saw %d requests", n)
	}
}

func TestSenderDoesNotFollowRedirects(t *testing.T) {
	var targetHits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/elsewhere", http.StatusFound) })
	mux.HandleFunc("/elsewhere", func(http.ResponseWriter, *http.Request) { targetHits.Add(1) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	a, err := privateSender(ClientOptions{}).Post(t.Context(), srv.URL+"/hook", nil, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != http.StatusFound || targetHits.Load() != 0 {
		t.Fatalf("answer %d, target hit %d times; want 302 and none", a.Status, targetHits.Load())
	}
}

// stallingReceiver never answers: each request waits until the test
// ends or its client goes away. arrived, if not nil, is told of each one.
func stallingReceiver(t *testing.T, arrived chan<- struct{}) string {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrived != nil {
			arrived <- struct{}{}
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: the handlers end, so Close does not wait
	return srv.URL
}

func TestSenderTimeout(t *testing.T) {
	url := stallingReceiver(t, nil)
	_, err := privateSender(ClientOptions{Timeout: 200 * time.Millisecond}).Post(t.Context(), url, nil, []byte(`{}`))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("error = %v, want a timeout", err)
	}
}

func TestSenderCancel(t *testing.T) {
	arrived := make(chan struct{}, 1)
	url := stallingReceiver(t, arrived)
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-arrived; cancel() }()
	_, err := privateSender(ClientOptions{Timeout: time.Minute}).Post(ctx, url, nil, []byte(`{}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

func TestSenderTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || r.ProtoMajor != 1 {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	conns := countConns(srv)
	srv.StartTLS()
	defer srv.Close()

	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	s := NewSender(SenderOptions{ClientOptions: ClientOptions{AllowPrivate: true, Timeout: 2 * time.Second}, RootCAs: pool})
	for range 2 {
		a, err := s.Post(t.Context(), srv.URL, nil, []byte(`{}`))
		if err != nil || a.Status != http.StatusNoContent {
			t.Fatalf("answer %d, error %v; want 204 over TLS", a.Status, err)
		}
	}
	// TLS 1.3's session tickets are read with the first answer, so they
	// do not count as unasked bytes: the connection is reused.
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for two posts over TLS, want one kept alive", n)
	}
	// Without the test server's root its certificate is not trusted.
	if _, err := privateSender(ClientOptions{}).Post(t.Context(), srv.URL, nil, []byte(`{}`)); err == nil {
		t.Fatal("an untrusted certificate was accepted")
	}
}

func TestSenderRetriesAConnectionTheReceiverClosed(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	conns := countConns(srv)
	srv.Start()
	defer srv.Close()

	s := privateSender(ClientOptions{})
	if _, err := s.Post(t.Context(), srv.URL, nil, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	srv.CloseClientConnections() // the pooled connection is now closed at the far end
	a, err := s.Post(t.Context(), srv.URL, nil, []byte(`{}`))
	if err != nil || a.Status != http.StatusOK {
		t.Fatalf("answer %d, error %v after the receiver closed the pooled connection", a.Status, err)
	}
	if h, c := hits.Load(), conns.Load(); h != 2 || c != 2 {
		t.Fatalf("receiver saw %d requests on %d connections, want 2 on 2", h, c)
	}
}

func TestSenderDropsConnectionsItCannotReuse(t *testing.T) {
	big := strings.Repeat("x", drainLimit+responseSnippet+10)
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, big) })
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Connection", "close") })
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "part one, ")
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, "part two")
	})
	srv := httptest.NewUnstartedServer(mux)
	conns := countConns(srv)
	srv.Start()
	defer srv.Close()

	for _, tt := range []struct {
		path  string
		head  string
		conns int32 // after two posts
	}{
		{"/big", big[:responseSnippet], 2},
		{"/close", "", 2},
		{"/chunked", "part one, part two", 1},
	} {
		conns.Store(0)
		s := privateSender(ClientOptions{})
		for range 2 {
			a, err := s.Post(t.Context(), srv.URL+tt.path, nil, []byte(`{}`))
			if err != nil || a.Status != http.StatusOK || string(a.Head) != tt.head {
				t.Fatalf("%s: answer %d %q, error %v", tt.path, a.Status, a.Head, err)
			}
		}
		if n := conns.Load(); n != tt.conns {
			t.Errorf("%s: %d connections for two posts, want %d", tt.path, n, tt.conns)
		}
		s.CloseIdleConnections()
	}
}

// rawReceiver answers every request with answer, written as is.
func rawReceiver(t *testing.T, answer string) (string, *atomic.Int32) {
	t.Helper()
	return rawReceiverFunc(t, func(_ int32, c net.Conn) error {
		_, err := io.WriteString(c, answer)
		return err
	})
}

// rawReceiverFunc reads requests and has answer write the bytes that
// answer each, given the number of its connection (from 1); it counts
// connections.
func rawReceiverFunc(t *testing.T, answer func(conn int32, c net.Conn) error) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int32
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range open {
			_ = c.Close() // the sender may keep it idle in its pool
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := conns.Add(1)
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					if err := answer(n, c); err != nil {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String(), &conns
}

func TestSenderSkipsInterimAnswers(t *testing.T) {
	url, conns := rawReceiver(t, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok")
	s := privateSender(ClientOptions{})
	for range 2 {
		a, err := s.Post(t.Context(), url, nil, []byte(`{}`))
		if err != nil || a.Status != http.StatusCreated || string(a.Head) != "ok" {
			t.Fatalf("answer %d %q, error %v; want 201 ok", a.Status, a.Head, err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections, want 1", n)
	}
}

func TestSenderDropsAConnectionWithExtraBytes(t *testing.T) {
	// Two answers to one request: the second must not be taken for the
	// answer to the next request.
	url, conns := rawReceiver(t, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n")
	s := privateSender(ClientOptions{})
	for range 2 {
		a, err := s.Post(t.Context(), url, nil, []byte(`{}`))
		if err != nil || a.Status != http.StatusOK {
			t.Fatalf("answer %d, error %v; want 200", a.Status, err)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
}

func TestSenderBoundsAnswerHeaders(t *testing.T) {
	url, _ := rawReceiver(t, "HTTP/1.1 200 OK\r\nX-Long: "+strings.Repeat("a", maxResponseHeaderBytes+answerBudget)+"\r\n\r\n")
	if _, err := privateSender(ClientOptions{}).Post(t.Context(), url, nil, []byte(`{}`)); !errors.Is(err, errAnswerTooLarge) {
		t.Fatalf("error = %v, want errAnswerTooLarge", err)
	}
}

func TestSenderCapsConnectionsPerHost(t *testing.T) {
	var inFlight, peak atomic.Int32
	release := make(chan struct{})
	arrived := make(chan struct{}, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		arrived <- struct{}{}
		<-release
		inFlight.Add(-1)
	}))
	defer srv.Close()

	s := privateSender(ClientOptions{MaxConnsPerHost: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for range 5 {
		wg.Go(func() {
			_, err := s.Post(t.Context(), srv.URL, nil, []byte(`{}`))
			errs <- err
		})
	}
	<-arrived
	<-arrived
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if p := peak.Load(); p != 2 {
		t.Fatalf("%d requests at once, want the cap of 2", p)
	}
}

func TestSenderRefusesBadInput(t *testing.T) {
	s := privateSender(ClientOptions{})
	for _, tt := range []struct {
		url     string
		headers []Header
	}{
		{"ftp://127.0.0.1:1/x", nil},
		{"http:///nohost", nil},
		{"http://exa mple.com/", nil},
		{"http://user:pass@127.0.0.1:1/", nil},
		{"http://127.0.0.1:1/", []Header{{"webhook-id", "a\r\nInjected: yes"}}},
		{"http://127.0.0.1:1/", []Header{{"bad name", "v"}}},
	} {
		if _, err := s.Post(t.Context(), tt.url, tt.headers, nil); err == nil {
			t.Errorf("%q %v: no error", tt.url, tt.headers)
		}
	}
}

func TestSenderClosesIdleConnections(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	s := privateSender(ClientOptions{})
	s.idleFor = 50 * time.Millisecond
	if _, err := s.Post(t.Context(), srv.URL, nil, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	idle := func() (int, int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.idle, len(s.hosts)
	}
	if n, _ := idle(); n != 1 {
		t.Fatalf("%d idle connections after a post, want 1", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for n, h := idle(); n != 0 || h != 0; n, h = idle() {
		if time.Now().After(deadline) {
			t.Fatalf("after the idle timeout: %d idle connections, %d receivers, want none", n, h)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSenderNeverSendsAWrittenRequestTwice: a receiver that takes the
// request and drops the connection without answering gets a failed
// attempt, not the same request again at once.
func TestSenderNeverSendsAWrittenRequestTwice(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 2 {
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				_ = conn.Close()
			}
		}
	}))
	defer srv.Close()

	s := privateSender(ClientOptions{})
	if _, err := s.Post(t.Context(), srv.URL, nil, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	// On the pooled connection: taken, then dropped unanswered.
	if _, err := s.Post(t.Context(), srv.URL, nil, []byte(`{}`)); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("error = %v, want an unexpected EOF", err)
	}
	if n := hits.Load(); n != 2 {
		t.Fatalf("receiver saw %d requests, want 2", n)
	}
	if _, err := s.Post(t.Context(), srv.URL, nil, []byte(`{}`)); err != nil {
		t.Fatalf("the next post: %v", err)
	}
}

// TestSenderDropsAConnectionWithUnaskedBytes: bytes a receiver sends
// while the connection is idle are not taken for the next answer.
func TestSenderDropsAConnectionWithUnaskedBytes(t *testing.T) {
	answered := make(chan struct{}) // the test read the first answer
	unasked := make(chan struct{})  // the receiver sent its extra bytes
	url, conns := rawReceiverFunc(t, func(n int32, c net.Conn) error {
		if _, err := io.WriteString(c, "HTTP/1.1 204 No Content\r\n\r\n"); err != nil || n != 1 {
			return err
		}
		<-answered
		_, err := io.WriteString(c, "HTTP/1.1 500 Unasked\r\nContent-Length: 0\r\n\r\n")
		close(unasked)
		return err
	})
	s := privateSender(ClientOptions{})
	for i := range 2 {
		a, err := s.Post(t.Context(), url, nil, []byte(`{}`))
		if err != nil || a.Status != http.StatusNoContent {
			t.Fatalf("post %d: answer %d, error %v; want 204", i, a.Status, err)
		}
		if i == 0 {
			close(answered)
			<-unasked
		}
	}
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2: the first one's unasked bytes must retire it", n)
	}
}
