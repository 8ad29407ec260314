package x402

import (
	"strconv"
	"time"
)

// Match returns the offer of p that the proof pp claims to pay, as
// [Middleware] matches it: a version 2 proof names its offer in full
// (scheme, network, amount, asset, payTo); a version 1 proof names only
// scheme and network, and when several offers could take it (offers that
// differ only in asset) Match returns the first, where Middleware asks the
// facilitator which one the signature verifies under. The offer is
// returned in the network naming of the proof. It lets a server that carries payments outside HTTP headers, such
// as the MCP transport's _meta["x402/payment"], apply the same rules.
func (p Price) Match(pp *PaymentPayload) (PaymentRequirements, bool) {
	return match(p.Accepts, pp)
}

// ReplayKey returns the key under which a [ReplayStore] records the proof
// p paying offer, and until when it must be held, as [Middleware] records
// it: an EIP-3009 authorization by network, asset, payer and nonce until
// its validBefore; any other payload by the hash of its JSON for the
// offer's timeout (at least a minute) from now.
func ReplayKey(p *PaymentPayload, offer PaymentRequirements, now time.Time) (key string, until time.Time) {
	return replayKey(p, offer, now)
}

// AuthorizationValidBefore returns the validBefore of the EIP-3009
// authorization p carries ("exact" on EVM networks), and false when its
// payload is not one or the time does not parse. [Middleware] refuses an
// authorization that expires before the route's work and its settlement
// can end; a server that carries payments outside HTTP headers applies
// the same rule with it.
func (p *PaymentPayload) AuthorizationValidBefore() (time.Time, bool) {
	a := authorizationOf(p)
	if a == nil {
		return time.Time{}, false
	}
	vb, err := strconv.ParseInt(a.ValidBefore, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(vb, 0), true
}
