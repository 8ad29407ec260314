package evm

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/vouchkit/vouch/x402"
)

// DefaultMaxHold is how long an "auth-capture" hold may last, from now
// to the offer's capture deadline, when [Payer].MaxHold is zero: until
// then only the server can release the payer's money, and after it the
// payer can reclaim it.
const DefaultMaxHold = 24 * time.Hour

// maxHold returns the longest hold p signs for.
func (p *Payer) maxHold() time.Duration {
	if p.MaxHold > 0 {
		return p.MaxHold
	}
	return DefaultMaxHold
}

// payAuthCapture signs the payer's authorization for an "auth-capture"
// offer, as SignAuthCapture does, with fresh random bytes.
func (p *Payer) payAuthCapture(offer x402.PaymentRequirements) (x402.Proof, error) {
	terms, err := ParseAuthCaptureOffer(offer)
	if err != nil {
		return x402.Proof{}, err
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	t := now()
	if hold := time.Unix(int64(terms.Extra.CaptureDeadline), 0).Sub(t); hold > p.maxHold() {
		return x402.Proof{}, fmt.Errorf("evm: the offer holds the payment for %v, until its capture deadline; the payer allows %v", hold.Round(time.Second), p.maxHold())
	}
	r := p.Rand
	if r == nil {
		r = rand.Reader
	}
	var random [32]byte
	if _, err := io.ReadFull(r, random[:]); err != nil {
		return x402.Proof{}, fmt.Errorf("evm: reading a salt: %w", err)
	}
	pl, err := SignAuthCapture(p.Key, terms, t, random)
	if err != nil {
		return x402.Proof{}, err
	}
	payload, err := json.Marshal(pl)
	if err != nil {
		return x402.Proof{}, fmt.Errorf("evm: encoding the payload: %w", err)
	}
	nonce := ""
	if pl.Authorization != nil {
		nonce = pl.Authorization.Nonce
	} else {
		nonce = pl.Permit2Authorization.Nonce
	}
	return x402.Proof{Payload: payload, Reference: pl.From() + ":" + nonce}, nil
}

// Payment returns l as the payment payload of a lifecycle settle under
// offer, for [x402.Facilitator.Settle] (and a facilitator's POST /settle
// through [x402.FacilitatorClient]).
func (l AuthCaptureLifecycle) Payment(offer x402.PaymentRequirements) (*x402.PaymentPayload, error) {
	raw, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("evm: encoding the %s payload: %w", l.Type, err)
	}
	return &x402.PaymentPayload{X402Version: x402.Version2, Accepted: offer, Payload: raw}, nil
}
