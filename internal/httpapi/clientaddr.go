package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// clientAddr returns the address of the client of r: the peer that
// connected, or, when that peer is one of the trusted proxies, the address
// the proxies name for it. The proxies' headers are read from the right,
// skipping the hops that are themselves trusted proxies: the first
// address that is not is the client. A hop that is not an IP address
// ("unknown", an obfuscated name, garbage) ends the walk at the last
// trusted hop. The Forwarded header (RFC 7239) and X-Forwarded-For are
// both read: a proxy that writes one often passes the other through as
// the client sent it, so when a request carries both and they name
// different clients, neither is believed and the client is the peer
// itself. It returns the invalid Addr when RemoteAddr holds no IP
// address.
func clientAddr(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer := peerAddr(r.RemoteAddr)
	if !peer.IsValid() || !isTrusted(peer, trusted) {
		return peer
	}
	fwd, xff := r.Header.Values("Forwarded"), r.Header.Values("X-Forwarded-For")
	switch {
	case len(fwd) > 0 && len(xff) > 0:
		if a, b := namedClient(peer, forwardedFor(fwd), trusted), namedClient(peer, forwardedForX(xff), trusted); a != b {
			return peer
		}
		return namedClient(peer, forwardedFor(fwd), trusted)
	case len(fwd) > 0:
		return namedClient(peer, forwardedFor(fwd), trusted)
	default:
		return namedClient(peer, forwardedForX(xff), trusted)
	}
}

// namedClient returns the client that hops, the addresses a proxy header
// lists, name behind peer, a trusted proxy: the rightmost hop that is not
// itself trusted, or the last trusted one where a hop is not an address.
func namedClient(peer netip.Addr, hops []string, trusted []netip.Prefix) netip.Addr {
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			break
		}
		client = a
		if !isTrusted(a, trusted) {
			break
		}
	}
	return client
}

// forwardedForX returns the hops of X-Forwarded-For header lines, in
// order.
func forwardedForX(lines []string) []string {
	var hops []string
	for _, v := range lines {
		for h := range strings.SplitSeq(v, ",") {
			hops = append(hops, strings.TrimSpace(h))
		}
	}
	return hops
}

// peerAddr parses the address of RemoteAddr ("host:port", or a bare
// host).
func peerAddr(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwardedFor returns the for= values of Forwarded header lines, in
// order; an element without one counts as an unknown hop.
func forwardedFor(lines []string) []string {
	var hops []string
	for _, line := range lines {
		for elem := range strings.SplitSeq(line, ",") {
			hop := "unknown"
			for pair := range strings.SplitSeq(elem, ";") {
				name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(strings.TrimSpace(name), "for") {
					hop = strings.Trim(strings.TrimSpace(value), `"`)
				}
			}
			hops = append(hops, hop)
		}
	}
	return hops
}

// parseHop parses one hop: an IPv4 address, with or without a port, or
// an IPv6 address, bare or in brackets with or without a port.
func parseHop(h string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(h); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if inner, ok := strings.CutPrefix(h, "["); ok {
		if inner, ok := strings.CutSuffix(inner, "]"); ok {
			if a, err := netip.ParseAddr(inner); err == nil {
				return a.Unmap().WithZone(""), true
			}
		}
	}
	return netip.Addr{}, false
}
