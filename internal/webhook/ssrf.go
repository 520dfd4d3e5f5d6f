package webhook

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// ErrNotPublic is wrapped by every refusal of a non-public address, so
// callers can tell a policy refusal from a network failure.
var ErrNotPublic = errors.New("webhook: address is not public")

// maxCallbackURLLen bounds stored and dialled URLs; 2048 is the de facto
// limit browsers and most HTTP servers accept.
const maxCallbackURLLen = 2048

type addrRange struct {
	prefix netip.Prefix
	reason string
}

// refusedV4 lists IPv4 space that a public callback must never reach
// (IANA special-purpose registry, minus the few globally reachable ones).
var refusedV4 = []addrRange{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\" 0.0.0.0/8"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private 10.0.0.0/8"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT 100.64.0.0/10"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback 127.0.0.0/8"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local 169.254.0.0/16"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private 172.16.0.0/12"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments 192.0.0.0/24"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation 192.0.2.0/24"},
	{netip.MustParsePrefix("192.88.99.0/24"), "deprecated 6to4 relay anycast 192.88.99.0/24"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private 192.168.0.0/16"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking 198.18.0.0/15"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation 198.51.100.0/24"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation 203.0.113.0/24"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast 224.0.0.0/4"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved 240.0.0.0/4"},
}

// refusedV6 lists native IPv6 space to refuse. Ranges that embed an IPv4
// address are judged by that address instead (see embeddings).
var refusedV6 = []addrRange{
	// Teredo tunnels to an arbitrary host behind a NAT; the embedded
	// server/client addresses say nothing reliable about the real target.
	{netip.MustParsePrefix("2001::/32"), "Teredo 2001::/32"},
	{netip.MustParsePrefix("2001:2::/48"), "benchmarking 2001:2::/48"},
	{netip.MustParsePrefix("2001:10::/28"), "deprecated ORCHID 2001:10::/28"},
	{netip.MustParsePrefix("2001:20::/28"), "ORCHIDv2 2001:20::/28"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation 2001:db8::/32"},
	{netip.MustParsePrefix("3fff::/20"), "documentation 3fff::/20"},
	{netip.MustParsePrefix("100::/64"), "discard-only 100::/64"},
	{netip.MustParsePrefix("fc00::/7"), "unique local fc00::/7"},
	{netip.MustParsePrefix("fe80::/10"), "link-local fe80::/10"},
	{netip.MustParsePrefix("fec0::/10"), "site-local fec0::/10"},
	{netip.MustParsePrefix("ff00::/8"), "multicast ff00::/8"},
}

// globalUnicastV6 is the only IPv6 space IANA allocates for global
// unicast; anything outside it (and not an IPv4 embedding) is refused.
var globalUnicastV6 = netip.MustParsePrefix("2000::/3")

// embedding is an IPv6 form that carries an IPv4 address; the IPv6
// address is only as public as every IPv4 address it may stand for.
type embedding struct {
	prefix  netip.Prefix
	name    string
	extract func(b [16]byte) []netip.Addr
}

var embeddings = []embedding{
	{netip.MustParsePrefix("::ffff:0:0/96"), "IPv4-mapped ::ffff:0:0/96", last32},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "IPv4-translated ::ffff:0:0:0/96", last32},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible ::/96", last32},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64 64:ff9b::/96", last32},
	// The local-use NAT64 prefix may be deployed as a /48, /56, /64 or /96
	// (RFC 8215, RFC 6052 section 2.2), and the IPv4 bits sit in a
	// different place for each; accept only if every reading is public.
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64 64:ff9b:1::/48", localNAT64},
	{netip.MustParsePrefix("2002::/16"), "6to4 2002::/16", func(b [16]byte) []netip.Addr {
		return []netip.Addr{netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})}
	}},
}

func last32(b [16]byte) []netip.Addr {
	return []netip.Addr{netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})}
}

// localNAT64 decodes the RFC 6052 layouts possible inside a /48; octet 8
// (bits 64–71) is always skipped by the format.
func localNAT64(b [16]byte) []netip.Addr {
	return []netip.Addr{
		netip.AddrFrom4([4]byte{b[6], b[7], b[9], b[10]}),    // /48
		netip.AddrFrom4([4]byte{b[7], b[9], b[10], b[11]}),   // /56
		netip.AddrFrom4([4]byte{b[9], b[10], b[11], b[12]}),  // /64
		netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), // /96
	}
}

// IsPublicAddr reports whether a is a globally reachable unicast address
// that a callback may be delivered to.
func IsPublicAddr(a netip.Addr) bool {
	return CheckPublicAddr(a) == nil
}

// CheckPublicAddr is IsPublicAddr with the reason for a refusal; the
// error wraps ErrNotPublic and names the address.
func CheckPublicAddr(a netip.Addr) error {
	if reason := whyNotPublic(a); reason != "" {
		return fmt.Errorf("%w: %s (%s)", ErrNotPublic, a, reason)
	}
	return nil
}

func whyNotPublic(a netip.Addr) string {
	switch {
	case !a.IsValid():
		return "invalid address"
	case a.Zone() != "":
		// Prefix.Contains never matches a zoned address, so judge the bare
		// address for a useful reason; a zone is refused either way.
		if r := whyNotPublic(a.WithZone("")); r != "" {
			return r
		}
		return "scoped address with a zone"
	case a.Is4():
		return whyNotPublic4(a)
	// Compared directly: netip's IsLoopback also matches ::ffff:127.0.0.0/104,
	// which is reported better as an IPv4 embedding below.
	case a == netip.IPv6Unspecified():
		return "unspecified ::"
	case a == netip.IPv6Loopback():
		return "loopback ::1"
	}
	b := a.As16()
	for _, e := range embeddings {
		if !e.prefix.Contains(a) {
			continue
		}
		for _, v4 := range e.extract(b) {
			if r := whyNotPublic4(v4); r != "" {
				return fmt.Sprintf("%s form of %s, which is %s", e.name, v4, r)
			}
		}
		return ""
	}
	for _, r := range refusedV6 {
		if r.prefix.Contains(a) {
			return r.reason
		}
	}
	if !globalUnicastV6.Contains(a) {
		return "outside global unicast 2000::/3"
	}
	return ""
}

func whyNotPublic4(a netip.Addr) string {
	switch {
	case a.IsUnspecified():
		return "unspecified 0.0.0.0"
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "limited broadcast 255.255.255.255"
	}
	for _, r := range refusedV4 {
		if r.prefix.Contains(a) {
			return r.reason
		}
	}
	return ""
}

// ValidateCallbackURL checks a callback URL when it is accepted, so that
// integrators hear about a bad URL at send time rather than through
// silent delivery failures. Hostnames are not resolved: the address is
// checked again when dialled, which is what actually stops SSRF.
// allowPrivate permits plain http and non-public IP literals.
func ValidateCallbackURL(raw string, allowPrivate bool) error {
	if len(raw) > maxCallbackURLLen {
		return fmt.Errorf("webhook: callback URL is %d bytes, limit is %d", len(raw), maxCallbackURLLen)
	}
	// A query is written into the request line as given: a space or a
	// quote there would split or bend the line, so the URL must arrive
	// percent-encoded (refused, not silently rewritten: the integrator's
	// receiver then sees exactly the URL it gave).
	if i := strings.IndexFunc(raw, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune("<>\"\\^`{|}", r) }); i >= 0 {
		return fmt.Errorf("webhook: callback URL has %q at byte %d: spaces, control and non-ASCII characters and <>\"\\^`{|} must be percent-encoded", raw[i:i+1], i)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("webhook: callback URL: %w", err)
	}
	switch {
	case !u.IsAbs():
		return errors.New("webhook: callback URL must be absolute")
	case u.Scheme != "https" && !(allowPrivate && u.Scheme == "http"):
		if allowPrivate {
			return fmt.Errorf("webhook: callback URL scheme %q is not http or https", u.Scheme)
		}
		return fmt.Errorf("webhook: callback URL scheme %q is not https", u.Scheme)
	case u.Opaque != "" || u.Hostname() == "":
		return errors.New("webhook: callback URL has no host")
	case u.User != nil:
		return errors.New("webhook: callback URL must not contain user info")
	case strings.Contains(raw, "#"):
		return errors.New("webhook: callback URL must not contain a fragment")
	}
	if err := checkPort(u.Port()); err != nil {
		return err
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if allowPrivate {
			return nil
		}
		if err := CheckPublicAddr(ip); err != nil {
			return fmt.Errorf("webhook: callback URL host: %w", err)
		}
		return nil
	}
	return checkHostname(host, allowPrivate)
}

func checkPort(p string) error {
	if p == "" {
		return nil
	}
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return fmt.Errorf("webhook: callback URL port %q is not a number", p)
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			break
		}
	}
	if n < 1 || n > 65535 {
		return fmt.Errorf("webhook: callback URL port %q is out of range", p)
	}
	return nil
}

// checkHostname refuses names that some resolvers would read as an IP
// address (a numeric or hex last label, as in "2130706433" or "127.1"),
// since those bypass the IP literal check above; no real TLD is numeric.
// "localhost" is refused early for a clearer message than a dial error.
func checkHostname(host string, allowPrivate bool) error {
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if name == "" {
		return errors.New("webhook: callback URL has no host")
	}
	labels := strings.Split(name, ".")
	last := labels[len(labels)-1]
	if last == "" || isNumericLabel(last) {
		return fmt.Errorf("webhook: callback URL host %q is not a valid hostname or IP address", host)
	}
	if !allowPrivate && (name == "localhost" || strings.HasSuffix(name, ".localhost")) {
		return fmt.Errorf("%w: %s (loopback name)", ErrNotPublic, host)
	}
	return nil
}

func isNumericLabel(l string) bool {
	if strings.HasPrefix(l, "0x") {
		return true
	}
	for _, c := range l {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
