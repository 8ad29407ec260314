package evm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/vouchkit/vouch/x402"
)

// ValidAfterSlack is how far before now a payer's authorization becomes
// valid, to absorb clock differences with the facilitator and the chain.
const ValidAfterSlack = 600 * time.Second

// DefaultTimeout is the validity of an authorization when the offer gives
// no maxTimeoutSeconds.
const DefaultTimeout = 600 * time.Second

// Payer is an [x402.Payer] for the "exact", "upto" and "auth-capture"
// schemes on EVM networks. For "exact" it
// signs an EIP-3009 TransferWithAuthorization of the offer's amount from
// its key's address to the offer's payTo, as EIP-712 typed data in the
// domain of the offer's asset (extra.name, extra.version, the chain id of
// the network, the asset as verifying contract). The nonce is 32 random
// bytes; the authorization is valid from now-ValidAfterSlack to
// now+maxTimeoutSeconds. For "upto" it signs a Permit2 authorization of
// at most the offer's amount (see [Payer.Pay]). For "auth-capture" it
// signs what [SignAuthCapture] signs, for offers that hold the payment at
// most MaxHold. Set its fields before
// first use; it is then safe for concurrent use.
type Payer struct {
	// Key signs the authorizations. Required.
	Key *PrivateKey
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Rand is the source of nonces; nil means crypto/rand. Concurrent
	// payments read it at once: it must be safe for concurrent use.
	Rand io.Reader
	// MaxHold is the longest an "auth-capture" offer may hold the payment
	// (from now to its capture deadline); zero means DefaultMaxHold.
	MaxHold time.Duration
}

// NewPayer returns a Payer for a private key in hex (see ParsePrivateKey).
func NewPayer(hexKey string) (*Payer, error) {
	k, err := ParsePrivateKey(hexKey)
	if err != nil {
		return nil, err
	}
	return &Payer{Key: k}, nil
}

// Address returns the address that pays.
func (p *Payer) Address() Address { return p.Key.Address() }

// Supports reports whether p can pay offer: scheme "exact" on an EVM
// network, with a token domain in extra, valid addresses and no
// extra.assetTransferMethod other than "eip3009" (an offer that asks for a
// Permit2 transfer cannot take an EIP-3009 authorization), or scheme
// "upto" with valid addresses and extra.facilitatorAddress, or scheme
// "auth-capture" whose offer [ParseAuthCaptureOffer] accepts.
func (p *Payer) Supports(offer x402.PaymentRequirements) bool {
	if offer.Scheme == x402.SchemeUpto {
		_, err := prepareUpto(offer)
		return err == nil
	}
	if offer.Scheme == x402.SchemeAuthCapture {
		_, err := ParseAuthCaptureOffer(offer)
		return err == nil
	}
	_, _, err := prepare(offer)
	return err == nil
}

// Pay signs an authorization for offer. For "exact" it is an EIP-3009
// transfer of the offer's amount; for "upto" a Permit2
// PermitWitnessTransferFrom whose permitted amount is the offer's amount,
// the most the server may settle, with spender UptoProxyAddress and a
// witness naming the offer's payTo and extra.facilitatorAddress; for
// "auth-capture" the payer's authorization of the offer's amount into the
// escrow, ERC-3009 or Permit2 as the offer asks, refused when the offer's
// capture deadline is further than MaxHold. The proof's reference is "<payer address>:<nonce>", which names the
// authorization on chain.
func (p *Payer) Pay(ctx context.Context, offer x402.PaymentRequirements) (x402.Proof, error) {
	if err := ctx.Err(); err != nil {
		return x402.Proof{}, err
	}
	if p.Key == nil {
		return x402.Proof{}, errors.New("evm: Payer.Key is nil")
	}
	if offer.Scheme == x402.SchemeUpto {
		return p.payUpto(offer)
	}
	if offer.Scheme == x402.SchemeAuthCapture {
		return p.payAuthCapture(offer)
	}
	domain, to, err := prepare(offer)
	if err != nil {
		return x402.Proof{}, err
	}
	w, err := p.window(offer)
	if err != nil {
		return x402.Proof{}, err
	}
	auth := Authorization{
		From:        p.Key.Address().String(),
		To:          to.String(),
		Value:       offer.Amount,
		ValidAfter:  w.after,
		ValidBefore: w.before,
		Nonce:       "0x" + hex.EncodeToString(w.nonce[:]),
	}
	digest, err := TransferDigest(domain, auth)
	if err != nil {
		return x402.Proof{}, err
	}
	payload, err := json.Marshal(ExactPayload{Signature: hexSig(p.Key.Sign(digest)), Authorization: auth})
	if err != nil {
		return x402.Proof{}, fmt.Errorf("evm: encoding the payload: %w", err)
	}
	return x402.Proof{Payload: payload, Reference: auth.From + ":" + auth.Nonce}, nil
}

// prepare checks offer and returns the token domain and the recipient.
func prepare(offer x402.PaymentRequirements) (Domain, Address, error) {
	if offer.Scheme != x402.SchemeExact {
		return Domain{}, Address{}, fmt.Errorf("evm: scheme %q is not %q", offer.Scheme, x402.SchemeExact)
	}
	chain, ok := x402.EVMChainID(offer.Network)
	if !ok {
		return Domain{}, Address{}, fmt.Errorf("evm: network %q is not a known EVM network", offer.Network)
	}
	d := Domain{Name: offer.ExtraString("name"), Version: offer.ExtraString("version"), ChainID: chain, VerifyingContract: offer.Asset}
	if d.Name == "" || d.Version == "" {
		return Domain{}, Address{}, errors.New("evm: the offer lacks extra.name and extra.version, the token's EIP-712 domain")
	}
	if m, ok := offer.Extra["assetTransferMethod"]; ok && m != TransferEIP3009 {
		return Domain{}, Address{}, fmt.Errorf("evm: the offer asks extra.assetTransferMethod %v; the payer signs only %q authorizations for \"exact\"", m, TransferEIP3009)
	}
	if _, err := ParseAddress(offer.Asset); err != nil {
		return Domain{}, Address{}, fmt.Errorf("evm: asset: %w", err)
	}
	to, err := ParseAddress(offer.PayTo)
	if err != nil {
		return Domain{}, Address{}, fmt.Errorf("evm: payTo: %w", err)
	}
	if _, err := x402.ParseAmount(offer.Amount); err != nil {
		return Domain{}, Address{}, err
	}
	return d, to, nil
}

// window is the validity and nonce of a new authorization.
type window struct {
	after, before string // Unix times
	nonce         [32]byte
}

// window returns a fresh nonce and a window from now-ValidAfterSlack to
// now plus the offer's maxTimeoutSeconds (DefaultTimeout when it has none).
func (p *Payer) window(offer x402.PaymentRequirements) (window, error) {
	var w window
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	timeout := DefaultTimeout
	if offer.MaxTimeoutSeconds > 0 {
		if int64(offer.MaxTimeoutSeconds) > math.MaxInt64/int64(time.Second) {
			return w, fmt.Errorf("evm: the offer's maxTimeoutSeconds %d is longer than a time.Duration holds", offer.MaxTimeoutSeconds)
		}
		timeout = time.Duration(offer.MaxTimeoutSeconds) * time.Second
	}
	r := p.Rand
	if r == nil {
		r = rand.Reader
	}
	if _, err := io.ReadFull(r, w.nonce[:]); err != nil {
		return w, fmt.Errorf("evm: reading a nonce: %w", err)
	}
	t := now()
	w.after = strconv.FormatInt(t.Add(-ValidAfterSlack).Unix(), 10)
	w.before = strconv.FormatInt(t.Add(timeout).Unix(), 10)
	return w, nil
}
