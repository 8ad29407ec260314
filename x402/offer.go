package x402

import (
	"encoding/json"
	"strings"
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
// its validBefore; a Permit2 authorization ("upto") by network, owner and
// nonce until its deadline; any other payload by the hash of its JSON for the
// offer's timeout (at least a minute) from now.
func ReplayKey(p *PaymentPayload, offer PaymentRequirements, now time.Time) (key string, until time.Time) {
	return replayKey(p, offer, now)
}

// AuthorizationFrom returns the from of the EIP-3009 authorization p
// carries ("exact" on EVM networks), or of its Permit2 authorization
// ("upto"): the address whose signature the facilitator checks, and so
// the payer of a payment it verifies, in lower case: a facilitator reads
// an address written all lower, all upper or with its EIP-55 checksum as
// one address, so one payer is named one way however it spells itself.
// It returns false when the payload is neither or names no from, and for
// a nil p. It is as claimed until a facilitator verifies the payment. [Middleware] names it as the payer
// of a verification or settlement whose answer leaves the payer out; a
// server that carries payments outside HTTP headers does the same with
// it.
func (p *PaymentPayload) AuthorizationFrom() (string, bool) {
	var pl struct {
		Authorization *struct {
			From string `json:"from"`
		} `json:"authorization"`
		Permit2 *struct {
			From string `json:"from"`
		} `json:"permit2Authorization"`
	}
	if p == nil || json.Unmarshal(p.Payload, &pl) != nil {
		return "", false
	}
	switch {
	case pl.Authorization != nil && pl.Authorization.From != "":
		return strings.ToLower(pl.Authorization.From), true
	case pl.Permit2 != nil && pl.Permit2.From != "":
		return strings.ToLower(pl.Permit2.From), true
	}
	return "", false
}

// AuthorizationValidBefore returns the validBefore of the EIP-3009
// authorization p carries ("exact" on EVM networks), or the deadline of
// its Permit2 authorization ("upto"), and false when its payload is
// neither or the time is not a decimal integer. A time later than a
// time.Time holds (the token contracts take any uint256) is returned as
// the latest one it holds. [Middleware] refuses an authorization that
// expires before the route's work and its settlement can end; a server
// that carries payments outside HTTP headers applies the same rule with
// it.
func (p *PaymentPayload) AuthorizationValidBefore() (time.Time, bool) {
	vb, _, ok := validBefore(p)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(vb, 0), true
}
