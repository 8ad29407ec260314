package httpapi

import (
	"net/http"
	"net/netip"
	"testing"
)

// FuzzClientAddr feeds outside input to the reading of Forwarded and
// X-Forwarded-For: it never panics, and the address it returns is the
// peer or one the headers name.
func FuzzClientAddr(f *testing.F) {
	f.Add("10.0.0.1:80", `for=192.0.2.60;proto=http;by=203.0.113.43`, "")
	f.Add("10.0.0.1:80", `for="[2001:db8:cafe::17]:4711", for=unknown`, "")
	f.Add("10.0.0.1:80", "", "203.0.113.195, 70.41.3.18, 10.0.0.2")
	f.Add("[::ffff:10.0.0.1]:80", "", "::ffff:192.0.2.1")
	f.Add("garbage", `for=_hidden`, "1.2.3.4%eth0")
	f.Add("10.0.0.1:80", `for=192.0.2.60;host="a,for=192.0.2.61";proto=https`, "")
	f.Add("10.0.0.1:80", `for="192.0.2.60, for=192.0.2.61`, "")
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::ffff:0:0/96")}
	f.Fuzz(func(t *testing.T, remote, forwarded, xff string) {
		r := &http.Request{RemoteAddr: remote, Header: http.Header{}}
		if forwarded != "" {
			r.Header.Set("Forwarded", forwarded)
		}
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		a := clientAddr(r, proxies{prefixes: trusted})
		peer := peerAddr(remote)
		if !peer.IsValid() && a.IsValid() {
			t.Fatalf("clientAddr = %v for a peer %q that is no address", a, remote)
		}
		if peer.IsValid() && !isTrusted(peer, trusted) && a != peer {
			t.Fatalf("clientAddr = %v, want the untrusted peer %v", a, peer)
		}
		if forwarded != "" && xff != "" {
			one := &http.Request{RemoteAddr: remote, Header: http.Header{"Forwarded": {forwarded}}}
			other := &http.Request{RemoteAddr: remote, Header: http.Header{"X-Forwarded-For": {xff}}}
			if b, c := clientAddr(one, proxies{prefixes: trusted}), clientAddr(other, proxies{prefixes: trusted}); b != c && a != peer {
				t.Fatalf("clientAddr = %v where the headers name %v and %v, want the peer %v", a, b, c, peer)
			}
		}
		if a.IsValid() && a.Zone() != "" {
			t.Fatalf("clientAddr = %v keeps a zone", a)
		}
	})
}
