package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// proxies are the reverse proxies whose client address headers a Server
// believes.
type proxies struct {
	prefixes []netip.Prefix // Config.TrustedProxies
	unix     bool           // Config.TrustUnixProxy
}

// proxies returns the proxies whose headers a Server of c believes.
func (c *Config) proxies() proxies {
	return proxies{prefixes: c.TrustedProxies, unix: c.TrustUnixProxy}
}

// believes reports whether p believes the headers of peer, the address
// of a request's peer: one in p's prefixes, or, with unix, a peer that
// holds no IP address (a Unix domain socket's).
func (p proxies) believes(peer netip.Addr) bool {
	if !peer.IsValid() {
		return p.unix
	}
	return isTrusted(peer, p.prefixes)
}

// clientAddr returns the address of the client of r: the peer that
// connected, or, when p believes that peer, the address the proxies name
// for it. The proxies' headers are read from the right,
// skipping the hops that are themselves trusted proxies: the first
// address that is not is the client. A hop that is not an IP address
// ("unknown", an obfuscated name, garbage) ends the walk at the last
// trusted hop. The Forwarded header (RFC 7239) and X-Forwarded-For are
// both read: a proxy that writes one often passes the other through as
// the client sent it, so when a request carries both and they name
// different clients, neither is believed and the client is the peer
// itself. It returns the invalid Addr when RemoteAddr holds no IP
// address and the headers name no client (or p does not believe them).
func clientAddr(r *http.Request, p proxies) netip.Addr {
	peer := peerAddr(r.RemoteAddr)
	if !p.believes(peer) {
		return peer
	}
	trusted := p.prefixes
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

// isTrusted reports whether a, an address without a zone and not
// IPv4-mapped, is in one of the trusted prefixes. An IPv4-mapped prefix
// (::ffff:10.0.0.0/104, as a dual-stack socket shows an IPv4 peer) is
// read as the IPv4 prefix it maps, since a is read unmapped.
func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwardedFor returns the for= values of Forwarded header lines, in
// order; an element without one, or with more than one, counts as an
// unknown hop. Values are read as RFC 7239 writes them, a token or a
// quoted-string: a proxy quotes what it passes on from the client (a
// Host header "a,for=192.0.2.1" in host="a,for=192.0.2.1"), and the
// commas, semicolons and for= inside the quotes are the value's text,
// not elements or parameters of their own. A line that does not parse
// (an unterminated quoted-string, text after one) counts as one unknown
// hop: where its elements begin and end cannot be told.
func forwardedFor(lines []string) []string {
	var hops []string
	for _, line := range lines {
		if elems, ok := forwardedElements(line); ok {
			hops = append(hops, elems...)
		} else {
			hops = append(hops, "unknown")
		}
	}
	return hops
}

// forwardedElements returns the for= value of each element of one
// Forwarded line ("unknown" for an element with none or several), and
// false when the line does not parse.
func forwardedElements(line string) ([]string, bool) {
	var (
		hops    []string
		hop     string
		fors    int
		i       int
		endElem = func() {
			if fors != 1 {
				hop = "unknown"
			}
			hops = append(hops, hop)
			hop, fors = "", 0
		}
	)
	for {
		i = skipOWS(line, i)
		if i == len(line) {
			endElem()
			return hops, true
		}
		switch line[i] {
		case ',':
			endElem()
			i++
			continue
		case ';':
			i++
			continue
		}
		// A pair: name "=" value.
		j := i
		for j < len(line) && !strings.ContainsRune("=,;\" \t", rune(line[j])) {
			j++
		}
		name := line[i:j]
		j = skipOWS(line, j)
		if name == "" || j == len(line) || line[j] != '=' {
			return nil, false
		}
		j = skipOWS(line, j+1)
		var value string
		if j < len(line) && line[j] == '"' {
			v, end, ok := quotedString(line, j)
			if !ok {
				return nil, false
			}
			value, j = v, end
		} else {
			k := j
			for k < len(line) && !strings.ContainsRune(",;\" \t", rune(line[k])) {
				k++
			}
			value, j = line[j:k], k
		}
		if k := skipOWS(line, j); k < len(line) && line[k] != ',' && line[k] != ';' {
			return nil, false // text after the value
		}
		if strings.EqualFold(name, "for") {
			hop, fors = value, fors+1
		}
		i = j
	}
}

// quotedString reads the RFC 9110 quoted-string that begins at s[i],
// and returns its text, without the quotes and backslashes of its
// quoted-pairs, and the index just after it; false when it does not end.
func quotedString(s string, i int) (string, int, bool) {
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; c {
		case '"':
			return b.String(), j + 1, true
		case '\\':
			if j+1 == len(s) {
				return "", 0, false
			}
			j++
			b.WriteByte(s[j])
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}

// skipOWS returns the index of the first byte at or after i in s that is
// not a space or a tab.
func skipOWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
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
