package webhook

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestIsPublicAddr(t *testing.T) {
	tests := []struct {
		addr   string
		public bool
		reason string // substring of the refusal
	}{
		// Public.
		{"8.8.8.8", true, ""},
		{"1.1.1.1", true, ""},
		{"100.63.255.255", true, ""},
		{"100.128.0.0", true, ""},
		{"172.15.255.255", true, ""},
		{"172.32.0.0", true, ""},
		{"192.0.1.1", true, ""},
		{"198.17.255.255", true, ""},
		{"198.20.0.0", true, ""},
		{"223.255.255.255", true, ""},
		{"2606:4700:4700::1111", true, ""},
		{"2a00:1450:4001:80b::200e", true, ""},
		{"::ffff:8.8.8.8", true, ""},
		{"::8.8.8.8", true, ""},
		{"64:ff9b::808:808", true, ""},
		{"64:ff9b:1:808:8:808:808:808", true, ""}, // 8.8.8.8 in every RFC 6052 layout
		{"2002:808:808::1", true, ""},

		// IPv4 special ranges.
		{"0.0.0.0", false, "unspecified"},
		{"0.1.2.3", false, "this network"},
		{"10.1.2.3", false, "private 10.0.0.0/8"},
		{"100.64.0.1", false, "carrier-grade NAT"},
		{"100.127.255.255", false, "carrier-grade NAT"},
		{"127.0.0.1", false, "loopback"},
		{"127.255.255.254", false, "loopback"},
		{"169.254.169.254", false, "link-local"},
		{"172.16.0.1", false, "private 172.16.0.0/12"},
		{"172.31.255.255", false, "private 172.16.0.0/12"},
		{"192.0.0.8", false, "IETF protocol assignments"},
		{"192.0.2.10", false, "documentation"},
		{"192.88.99.1", false, "6to4 relay"},
		{"192.168.1.1", false, "private 192.168.0.0/16"},
		{"198.18.0.1", false, "benchmarking"},
		{"198.19.255.255", false, "benchmarking"},
		{"198.51.100.7", false, "documentation"},
		{"203.0.113.9", false, "documentation"},
		{"224.0.0.1", false, "multicast"},
		{"239.255.255.250", false, "multicast"},
		{"240.0.0.1", false, "reserved"},
		{"255.255.255.255", false, "broadcast"},

		// Native IPv6.
		{"::", false, "unspecified"},
		{"::1", false, "loopback"},
		{"fc00::1", false, "unique local"},
		{"fd12:3456::1", false, "unique local"},
		{"fe80::1", false, "link-local"},
		{"fe80::1%eth0", false, "link-local"},
		{"fec0::1", false, "site-local"},
		{"ff02::1", false, "multicast"},
		{"2001:db8::1", false, "documentation"},
		{"3fff::1", false, "documentation"},
		{"2001:2::1", false, "benchmarking"},
		{"2001:20::1", false, "ORCHID"},
		{"100::1", false, "discard"},
		{"4000::1", false, "outside global unicast"},
		{"2606:4700::1%eth0", false, "zone"},

		// IPv6 forms that embed IPv4: judged by the IPv4 address.
		{"::ffff:127.0.0.1", false, "IPv4-mapped ::ffff:0:0/96 form of 127.0.0.1, which is loopback"},
		{"::ffff:10.0.0.1", false, "private"},
		{"::ffff:169.254.169.254", false, "link-local"},
		{"::ffff:0:192.168.0.1", false, "IPv4-translated"},
		{"::127.0.0.1", false, "IPv4-compatible"},
		{"::0.0.0.2", false, "IPv4-compatible"},
		{"64:ff9b::7f00:1", false, "NAT64 64:ff9b::/96 form of 127.0.0.1"},
		{"64:ff9b::a00:1", false, "private"},
		{"64:ff9b:1::7f00:1", false, "local-use NAT64"},           // /96 layout
		{"64:ff9b:1:a00:0001::", false, "local-use NAT64"},        // /48 layout: 10.0.0.1
		{"64:ff9b:1:80a:8:808:808:808", false, "local-use NAT64"}, // public except the /56 reading: 10.8.8.8
		{"2002:7f00:1::1", false, "6to4 2002::/16 form of 127.0.0.1"},
		{"2002:c0a8:101::1", false, "private 192.168.0.0/16"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false, "Teredo"},
		{"2001::1", false, "Teredo"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			a := netip.MustParseAddr(tt.addr)
			if got := IsPublicAddr(a); got != tt.public {
				t.Fatalf("IsPublicAddr(%s) = %v, want %v", tt.addr, got, tt.public)
			}
			err := CheckPublicAddr(a)
			if tt.public {
				if err != nil {
					t.Fatalf("CheckPublicAddr(%s) = %v", tt.addr, err)
				}
				return
			}
			if !errors.Is(err, ErrNotPublic) {
				t.Fatalf("CheckPublicAddr(%s) = %v, want ErrNotPublic", tt.addr, err)
			}
			if !strings.Contains(err.Error(), tt.reason) || !strings.Contains(err.Error(), a.String()) {
				t.Fatalf("CheckPublicAddr(%s) = %q, want it to name the address and %q", tt.addr, err, tt.reason)
			}
		})
	}
	if IsPublicAddr(netip.Addr{}) {
		t.Fatal("zero Addr reported public")
	}
}

func TestValidateCallbackURL(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", 2048-len("https://example.com/"))
	tests := []struct {
		url          string
		allowPrivate bool
		wantErr      string // "" means valid
	}{
		{"https://example.com/hooks", false, ""},
		{"https://example.com:8443/hooks?x=1", false, ""},
		{"HTTPS://Example.COM/", false, ""},
		{"https://8.8.8.8/cb", false, ""},
		{"https://[2606:4700:4700::1111]/cb", false, ""},
		{"https://xn--bcher-kva.example/", false, ""},
		{long, false, ""},
		{long + "a", false, "limit is 2048"},

		{"http://example.com/", false, "not https"},
		{"http://example.com/", true, ""},
		{"ftp://example.com/", true, "not http or https"},
		{"/relative/path", false, "absolute"},
		{"example.com/hook", false, "absolute"},
		{"https:opaque", false, "no host"},
		{"https:///path", false, "no host"},
		{"https://:443/", false, "no host"},
		{"https://user:pass@example.com/", false, "user info"},
		{"https://user@example.com/", true, "user info"},
		{"https://example.com/#frag", false, "fragment"},
		{"https://example.com/#", false, "fragment"},
		{"https://example.com/hook?a=b c", false, "percent-encoded"},
		{"https://example.com/hook?a=<b>", false, "percent-encoded"},
		{"https://example.com/hook?a=\"b\"", false, "percent-encoded"},
		{"https://example.com/a b", true, "percent-encoded"},
		{"https://example.com/hook?a=\tb", false, "percent-encoded"},
		{"https://example.com/hook?a=é", false, "percent-encoded"},
		{"https://example.com/hook?a=%20%3Cb%3E%22", false, ""},
		{"https://example.com:0/", false, "out of range"},
		{"https://example.com:65536/", false, "out of range"},
		{"https://example.com:99999999999999999999/", false, "out of range"},
		{"https://exa mple.com/", false, "percent-encoded"},
		{"https://127.0.0.1/", false, "loopback"},
		{"https://127.0.0.1:8080/", true, ""},
		{"http://127.0.0.1:8080/cb", true, ""},
		{"https://10.0.0.1/", false, "private"},
		{"https://169.254.169.254/latest/meta-data", false, "link-local"},
		{"https://[::1]/", false, "loopback"},
		{"https://[::ffff:127.0.0.1]/", false, "IPv4-mapped"},
		{"https://[fe80::1%25eth0]/", false, "link-local"},
		{"http://[::1]:9000/", true, ""},
		{"https://localhost/", false, "loopback name"},
		{"https://api.localhost./", false, "loopback name"},
		{"http://localhost:8080/", true, ""},
		{"https://2130706433/", false, "not a valid hostname"},
		{"https://127.1/", false, "not a valid hostname"},
		{"https://0x7f.0x0.0x0.0x1/", false, "not a valid hostname"},
		{"https://2130706433/", true, "not a valid hostname"},
		{"https://example.com../", false, "not a valid hostname"},
	}
	for _, tt := range tests {
		name := tt.url
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			err := ValidateCallbackURL(tt.url, tt.allowPrivate)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ValidateCallbackURL(%q, %v) = %v, want nil", tt.url, tt.allowPrivate, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ValidateCallbackURL(%q, %v) = %v, want error containing %q", tt.url, tt.allowPrivate, err, tt.wantErr)
			}
		})
	}
}
