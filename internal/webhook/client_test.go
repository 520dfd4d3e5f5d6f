package webhook

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func baseTransport(t *testing.T, c *http.Client) *http.Transport {
	t.Helper()
	switch rt := c.Transport.(type) {
	case *http.Transport:
		return rt
	case *userAgentTransport:
		return rt.base
	}
	t.Fatalf("unexpected transport %T", c.Transport)
	return nil
}

func TestNewClientDefaults(t *testing.T) {
	c := NewClient(ClientOptions{})
	tr := baseTransport(t, c)
	if c.Timeout != 5*time.Second {
		t.Errorf("Timeout = %v, want 5s", c.Timeout)
	}
	if tr.Proxy != nil {
		t.Error("Proxy is set; webhooks must never go through a proxy")
	}
	if tr.MaxConnsPerHost != 64 || tr.MaxIdleConnsPerHost != 64 {
		t.Errorf("MaxConnsPerHost=%d MaxIdleConnsPerHost=%d, want 64/64", tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost)
	}
	if !tr.ForceAttemptHTTP2 {
		t.Error("HTTP/2 not attempted")
	}
	if tr.DisableKeepAlives {
		t.Error("keep-alives disabled")
	}
	c = NewClient(ClientOptions{Timeout: time.Second, MaxConnsPerHost: 4096})
	tr = baseTransport(t, c)
	if c.Timeout != time.Second || tr.MaxConnsPerHost != 4096 || tr.MaxIdleConnsPerHost != 4096 || tr.MaxIdleConns < 4096 {
		t.Errorf("options not applied: timeout=%v conns=%d idle/host=%d idle=%d", c.Timeout, tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost, tr.MaxIdleConns)
	}
}

func post(ctx context.Context, c *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{}`))
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, nil
}

func TestClientRefusesPrivateDial(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
	}))
	defer srv.Close()

	c := NewClient(ClientOptions{Timeout: 2 * time.Second})
	_, err := post(t.Context(), c, srv.URL)
	if err == nil {
		t.Fatal("request to loopback succeeded")
	}
	if !errors.Is(err, ErrNotPublic) || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("error = %v, want ErrNotPublic naming 127.0.0.1", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("server saw %d requests", n)
	}
}

func TestClientAllowPrivate(t *testing.T) {
	uaSeen := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uaSeen <- r.Header.Get("User-Agent")
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	c := NewClient(ClientOptions{AllowPrivate: true, Timeout: 2 * time.Second, UserAgent: "msgsvc-webhooks/1"})
	var reused []bool
	for range 2 {
		ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { reused = append(reused, i.Reused) },
		})
		resp, err := post(ctx, c, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("status = %d, want 204", resp.StatusCode)
		}
		if ua := <-uaSeen; ua != "msgsvc-webhooks/1" {
			t.Fatalf("User-Agent = %q", ua)
		}
	}
	if len(reused) != 2 || !reused[1] {
		t.Fatalf("connection reuse = %v, want the second request on a pooled connection", reused)
	}
}

func TestClientDoesNotFollowRedirects(t *testing.T) {
	var targetHits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		targetHits.Add(1)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	c := NewClient(ClientOptions{AllowPrivate: true, Timeout: 2 * time.Second})
	resp, err := post(t.Context(), c, srv.URL+"/hook")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/elsewhere" {
		t.Fatalf("got %d Location=%q, want 302 /elsewhere", resp.StatusCode, resp.Header.Get("Location"))
	}
	if n := targetHits.Load(); n != 0 {
		t.Fatalf("redirect target was requested %d times", n)
	}
}

func TestClientTimeout(t *testing.T) {
	url := stallingReceiver(t, nil)
	c := NewClient(ClientOptions{AllowPrivate: true, Timeout: 200 * time.Millisecond})
	_, err := post(t.Context(), c, url)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("error = %v, want a timeout", err)
	}
}

func TestClientHTTP2(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			w.WriteHeader(http.StatusHTTPVersionNotSupported)
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	c := NewClient(ClientOptions{AllowPrivate: true, Timeout: 2 * time.Second})
	baseTransport(t, c).TLSClientConfig.RootCAs = srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	resp, err := post(t.Context(), c, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusOK {
		t.Fatalf("got %s %d, want HTTP/2 200", resp.Proto, resp.StatusCode)
	}
}

func TestRefusePrivateControl(t *testing.T) {
	tests := []struct {
		network, address string
		ok               bool
	}{
		{"tcp4", "8.8.8.8:443", true},
		{"tcp6", "[2606:4700:4700::1111]:443", true},
		{"tcp4", "127.0.0.1:443", false},
		{"tcp4", "10.1.1.1:80", false},
		{"tcp4", "169.254.169.254:80", false},
		{"tcp6", "[::1]:443", false},
		{"tcp6", "[::ffff:192.168.0.1]:443", false},
		{"tcp6", "[64:ff9b::a9fe:a9fe]:80", false},
		{"tcp6", "[fe80::1%eth0]:443", false},
		{"tcp", "not-an-address", false},
	}
	for _, tt := range tests {
		t.Run(tt.address, func(t *testing.T) {
			err := refusePrivate(tt.network, tt.address, nil)
			if (err == nil) != tt.ok {
				t.Fatalf("refusePrivate(%s) = %v, want ok=%v", tt.address, err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), tt.address) {
				t.Fatalf("error %q does not name %s", err, tt.address)
			}
		})
	}
}
