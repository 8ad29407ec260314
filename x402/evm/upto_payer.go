package evm

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/vouchkit/vouch/x402"
)

// ExtraFacilitatorAddress is the member of an "upto" offer's extra that
// names the facilitator allowed to settle; a payer signs it into the
// witness.
const ExtraFacilitatorAddress = "facilitatorAddress"

// uptoTerms is what an "upto" offer fixes of the authorization.
type uptoTerms struct {
	chain                  uint64
	token, to, facilitator Address
}

// prepareUpto checks an "upto" offer.
func prepareUpto(offer x402.PaymentRequirements) (uptoTerms, error) {
	var t uptoTerms
	if offer.Scheme != x402.SchemeUpto {
		return t, fmt.Errorf("evm: scheme %q is not %q", offer.Scheme, x402.SchemeUpto)
	}
	chain, ok := x402.EVMChainID(offer.Network)
	if !ok {
		return t, fmt.Errorf("evm: network %q is not a known EVM network", offer.Network)
	}
	t.chain = chain
	var err error
	if t.token, err = ParseAddress(offer.Asset); err != nil {
		return t, fmt.Errorf("evm: asset: %w", err)
	}
	if t.to, err = ParseAddress(offer.PayTo); err != nil {
		return t, fmt.Errorf("evm: payTo: %w", err)
	}
	fa := offer.ExtraString(ExtraFacilitatorAddress)
	if fa == "" {
		return t, errors.New("evm: the upto offer lacks extra.facilitatorAddress, the facilitator the authorization binds")
	}
	if t.facilitator, err = ParseAddress(fa); err != nil {
		return t, fmt.Errorf("evm: extra.facilitatorAddress: %w", err)
	}
	if t.facilitator == (Address{}) {
		// No facilitator signs from it: the authorization could never settle.
		return t, errors.New("evm: extra.facilitatorAddress is the zero address, which no facilitator settles from")
	}
	if _, err := x402.ParseAmount(offer.Amount); err != nil {
		return t, err
	}
	return t, nil
}

// payUpto signs a Permit2 authorization of at most offer.Amount.
func (p *Payer) payUpto(offer x402.PaymentRequirements) (x402.Proof, error) {
	terms, err := prepareUpto(offer)
	if err != nil {
		return x402.Proof{}, err
	}
	w, err := p.window(offer)
	if err != nil {
		return x402.Proof{}, err
	}
	auth := Permit2Authorization{
		From:      p.Key.Address().String(),
		Permitted: TokenPermissions{Token: terms.token.String(), Amount: offer.Amount},
		Spender:   UptoProxyAddress,
		Nonce:     new(big.Int).SetBytes(w.nonce[:]).String(),
		Deadline:  w.before,
		Witness: UptoWitness{
			To:          terms.to.String(),
			Facilitator: terms.facilitator.String(),
			ValidAfter:  w.after,
		},
	}
	digest, err := UptoDigest(terms.chain, auth)
	if err != nil {
		return x402.Proof{}, err
	}
	payload, err := json.Marshal(UptoPayload{Signature: hexSig(p.Key.Sign(digest)), Permit2Authorization: auth})
	if err != nil {
		return x402.Proof{}, fmt.Errorf("evm: encoding the payload: %w", err)
	}
	return x402.Proof{Payload: payload, Reference: auth.From + ":" + auth.Nonce}, nil
}
