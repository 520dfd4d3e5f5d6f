package api

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientAddrBehindTrustedProxies(t *testing.T) {
	s := &Server{cfg: Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("2001:db8:ffff::/48"), netip.MustParsePrefix("127.0.0.1/32")}}}
	cases := []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"no proxy, no header", "203.0.113.7:5000", nil, "203.0.113.7"},
		{"untrusted peer's header is ignored", "203.0.113.7:5000", []string{"198.51.100.1"}, "203.0.113.7"},
		{"trusted proxy", "10.1.2.3:443", []string{"198.51.100.1"}, "198.51.100.1"},
		{"client forges the left of the chain", "10.1.2.3:443", []string{"1.2.3.4, 198.51.100.1"}, "198.51.100.1"},
		{"chain of trusted proxies", "10.1.2.3:443", []string{"198.51.100.1, 10.9.9.9", "127.0.0.1"}, "198.51.100.1"},
		{"IPv6 client through an IPv6 proxy", "[2001:db8:ffff::1]:443", []string{"2001:db8:1::42"}, "2001:db8:1::42"},
		{"IPv4-mapped", "10.1.2.3:443", []string{"::ffff:198.51.100.9"}, "198.51.100.9"},
		{"malformed header keeps the peer", "10.1.2.3:443", []string{"198.51.100.1, not-an-ip"}, "10.1.2.3"},
		{"only proxies in the chain", "10.1.2.3:443", []string{"10.0.0.1"}, "10.1.2.3"},
		{"no header from a proxy", "10.1.2.3:443", nil, "10.1.2.3"},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := s.clientAddr(r).String(); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
