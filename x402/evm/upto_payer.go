package evm

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"time"

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
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	timeout := DefaultTimeout
	if offer.MaxTimeoutSeconds > 0 {
		timeout = time.Duration(offer.MaxTimeoutSeconds) * time.Second
	}
	r := p.Rand
	if r == nil {
		r = rand.Reader
	}
	var nonce [32]byte
	if _, err := io.ReadFull(r, nonce[:]); err != nil {
		return x402.Proof{}, fmt.Errorf("evm: reading a nonce: %w", err)
	}
	t := now()
	auth := Permit2Authorization{
		From:      p.Key.Address().String(),
		Permitted: TokenPermissions{Token: terms.token.String(), Amount: offer.Amount},
		Spender:   UptoProxyAddress,
		Nonce:     new(big.Int).SetBytes(nonce[:]).String(),
		Deadline:  strconv.FormatInt(t.Add(timeout).Unix(), 10),
		Witness: UptoWitness{
			To:          terms.to.String(),
			Facilitator: terms.facilitator.String(),
			ValidAfter:  strconv.FormatInt(t.Add(-ValidAfterSlack).Unix(), 10),
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
