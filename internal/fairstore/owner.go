package fairstore

import (
	"net/netip"
	"strings"
)

// IPv6OwnerBits is the prefix by which [OwnerOf] counts a caller named by
// an IPv6 address where no other length is configured: a /64, what a
// network hands one machine, as the trial rate limit counts by default.
const IPv6OwnerBits = 64

// OwnerOf returns the owner that answers for the entries of caller: caller
// itself, but for a caller the HTTP doors name by an IPv6 address
// ("ip:<address>", alone or before a space and more, or after "trial:",
// the owner of an anonymous trial caller's calls), the address's prefix
// of bits in its place ("ip:2001:db8::/64"), the rest kept. A
// machine that takes a new address of its prefix for each call so holds
// its entries as one owner, and cannot push out another owner's entries by
// posing as many. Any other caller, an IPv4 address included, is its own
// owner; bits outside 1 to 127 keep the address whole.
func OwnerOf(caller string, bits int) string {
	name, rest, more := strings.Cut(caller, " ")
	trial := ""
	if n, ok := strings.CutPrefix(name, "trial:"); ok {
		trial, name = "trial:", n
	}
	ip, ok := strings.CutPrefix(name, "ip:")
	if !ok || bits <= 0 || bits >= 128 {
		return caller
	}
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is6() || a.Is4In6() {
		return caller
	}
	p, err := a.Prefix(bits)
	if err != nil {
		return caller
	}
	if name = trial + "ip:" + p.String(); more {
		return name + " " + rest
	}
	return name
}
