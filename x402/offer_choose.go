package x402

import (
	"context"
	"strings"
	"time"
)

// match returns the first of the route's offers that the proof may pay
// (see candidates), in the network naming of the proof.
func match(offers []PaymentRequirements, p *PaymentPayload) (PaymentRequirements, bool) {
	c := candidates(offers, p)
	if len(c) == 0 {
		return PaymentRequirements{}, false
	}
	return c[0], true
}

// candidates returns the route's offers that the proof may pay, best
// first, each in the network naming of the proof. A version 2 proof names
// its offer in full. A version 1 proof names only scheme and network; when
// its payload is an EIP-3009 authorization, the offers are those whose
// payTo is the authorization's recipient and whose amount is its value,
// then those whose amount is below it, so that a route with several offers
// on one network takes each of them. Offers that differ only in asset
// (USDC and EURC) are all candidates of a version 1 proof: the payload
// names no asset, only the signature's EIP-712 domain tells them apart.
func candidates(offers []PaymentRequirements, p *PaymentPayload) []PaymentRequirements {
	a := p.Accepted
	var auth *eip3009
	if p.X402Version == Version1 {
		auth = authorizationOf(p)
	}
	var exact, over []PaymentRequirements
	for _, o := range offers {
		if o.Scheme != a.Scheme || !SameNetwork(o.Network, a.Network) {
			continue
		}
		if p.X402Version == Version2 && (o.Amount != a.Amount || !strings.EqualFold(o.Asset, a.Asset) || !strings.EqualFold(o.PayTo, a.PayTo)) {
			continue
		}
		o.Network = a.Network
		if auth == nil {
			exact = append(exact, o)
			continue
		}
		if !strings.EqualFold(o.PayTo, auth.To) {
			continue
		}
		price, perr := ParseAmount(o.Amount)
		value, verr := ParseAmount(auth.Value)
		switch {
		case perr != nil || verr != nil || value < price:
		case value == price:
			exact = append(exact, o)
		default:
			over = append(over, o)
		}
	}
	return append(exact, over...)
}

// choose returns the route's offer that the proof p pays. When several
// offers are candidates (see candidates), the facilitator verifies p
// against each in turn and the first it finds valid is chosen, with its
// verification: for an EIP-3009 authorization, the offer whose EIP-712
// domain (asset, name, version) the signature verifies under. When none
// is valid, the offer whose use of p was settled before, or whose outcome
// a gated or escrow route keeps (with or without an Idempotency-Key), is
// chosen, so that a repeat of a spent proof is recognised as one, or else
// the first candidate with its verification. vr is nil when the
// facilitator was not asked (one candidate).
func (pw *paywall) choose(ctx context.Context, offers []PaymentRequirements, p *PaymentPayload, now time.Time) (offer PaymentRequirements, vr *VerifyResponse, ok bool, err error) {
	c := candidates(offers, p)
	switch len(c) {
	case 0:
		return PaymentRequirements{}, nil, false, nil
	case 1:
		return c[0], nil, true, nil
	}
	var first *VerifyResponse
	for _, o := range c {
		vr, err := pw.cfg.Facilitator.Verify(ctx, p, o)
		if err != nil {
			return PaymentRequirements{}, nil, false, err
		}
		if vr.IsValid {
			return o, vr, true, nil
		}
		if first == nil {
			first = vr
		}
	}
	for _, o := range c {
		key, _ := replayKey(p, o, now)
		if _, settled, err := pw.replay.LookupSettled(ctx, key, now); err == nil && settled {
			return o, nil, true, nil
		}
		if _, kept, err := pw.outcomes.Lookup(ctx, key, now); err == nil && kept {
			return o, nil, true, nil // a gated or escrow outcome, kept with or without an Idempotency-Key
		}
	}
	return c[0], first, true, nil
}
