package domain

import (
	"net/netip"
	"strings"
)

// AddrAllowed checks an address against an account's IP allow-list of
// addresses and CIDR ranges; an empty list allows everyone. Every front
// (the API, the SMPP server) checks with this one.
func AddrAllowed(list []string, addr netip.Addr) bool {
	if len(list) == 0 {
		return true
	}
	addr = addr.Unmap()
	for _, e := range list {
		e = strings.TrimSpace(e)
		if p, err := netip.ParsePrefix(e); err == nil {
			if p.Contains(addr) {
				return true
			}
			continue
		}
		if a, err := netip.ParseAddr(e); err == nil && a.Unmap() == addr {
			return true
		}
	}
	return false
}
