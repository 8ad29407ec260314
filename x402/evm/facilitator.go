package evm

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vouchkit/vouch/x402"
)

// The reasons a payment is invalid, in the protocol's words where it has
// them (section 9 of the x402 specification).
const (
	ReasonInvalidVersion   = "invalid_x402_version"
	ReasonInvalidScheme    = "invalid_scheme"
	ReasonInvalidNetwork   = "invalid_network"
	ReasonInvalidPayload   = "invalid_payload"
	ReasonInvalidOffer     = "invalid_payment_requirements"
	ReasonAssetMismatch    = "invalid_exact_evm_asset_mismatch"
	ReasonRecipient        = "invalid_exact_evm_payload_recipient_mismatch"
	ReasonValue            = "invalid_exact_evm_payload_authorization_value_mismatch"
	ReasonValidAfter       = "invalid_exact_evm_payload_authorization_valid_after"
	ReasonValidBefore      = "invalid_exact_evm_payload_authorization_valid_before"
	ReasonSignature        = "invalid_exact_evm_payload_signature"
	ReasonNonceAlreadyUsed = "invalid_exact_evm_nonce_already_used"
)

// TestNetworks returns the CAIP-2 ids of the EVM test networks a
// [Facilitator] accepts by default.
func TestNetworks() []string {
	return []string{"eip155:84532", "eip155:43113", "eip155:11155111", "eip155:80002", "eip155:11124", "eip155:1328", "eip155:2201", "eip155:324705682"}
}

// Settlement is a payment a [Facilitator] settled.
type Settlement struct {
	// Scheme is "exact" or "upto".
	Scheme string
	// Transaction is the made-up transaction hash reported to the server,
	// "" for an "upto" settlement of zero, which moves nothing.
	Transaction string
	// Network is the network of the offer, as the server named it.
	Network string
	// Asset is the token contract.
	Asset string
	// Payer is the address that paid.
	Payer string
	// Amount is the amount settled, in atomic units: the authorization's
	// value for "exact", the amount the server charged for "upto".
	Amount string
	// Authorization is the settled EIP-3009 authorization ("exact").
	Authorization Authorization
	// Permit2 is the settled Permit2 authorization ("upto"), nil for
	// "exact"; its permitted amount is the most that could have settled.
	Permit2 *Permit2Authorization
	// At is when the settlement was recorded.
	At time.Time
}

// Facilitator is an [x402.Facilitator] for "exact" and "upto" payments
// on EVM test networks that works offline, for tests and demonstrations:
// it checks a proof as a token contract would (the signature, with v 27
// or 28, recovers to the payer, recipient, amount at least the price,
// asset, network, validity window validAfter < now < validBefore, both
// strict and both read as the contract reads them, as decimal uint256,
// nonce never used) and records settlements instead of sending
// transactions. An "upto"
// proof (a Permit2 authorization) must also name the upto proxy as
// spender and this facilitator's Address in its witness, permit exactly
// the offer's amount at Verify, and is settled for the amount of the
// offer given to Settle, the amount used, never above the permitted
// maximum. It does not check balances, so it accepts a valid payment
// from any payer. It keeps every authorization it settled, and every
// Settlement, for as long as it lives, as a chain keeps them: memory that
// grows with each payment, which a test or a demonstration can afford and
// a server paid by real traffic gives to a real facilitator instead. Its
// zero value is ready to use; it is safe for concurrent use.
type Facilitator struct {
	// Networks lists the networks accepted, in either naming; nil means
	// TestNetworks.
	Networks []string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Address is the address "upto" payments must name as their
	// facilitator; zero means OfflineFacilitatorAddress. Supported
	// reports it in extra.facilitatorAddress.
	Address Address

	mu      sync.Mutex
	used    map[string]bool // settled authorizations, by authorizationKey
	settled []Settlement
}

func (f *Facilitator) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *Facilitator) networks() []string {
	if f.Networks != nil {
		return f.Networks
	}
	return TestNetworks()
}

// Verify checks p against the server's offer r.
func (f *Facilitator) Verify(_ context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	c, vr := f.check(p, r, r.Amount)
	if vr != nil {
		return vr, nil
	}
	f.mu.Lock()
	used := f.used[c.key]
	f.mu.Unlock()
	if used {
		reason := ReasonNonceAlreadyUsed
		if c.permit != nil {
			reason = ReasonPermit2Nonce
		}
		return invalid(reason, c.payer, "the authorization was already settled"), nil
	}
	return &x402.VerifyResponse{IsValid: true, Payer: c.payer}, nil
}

// Settle checks p again and records it as settled, once: a second Settle
// of the same authorization fails with ReasonNonceAlreadyUsed
// (ReasonPermit2Nonce for "upto"). For "upto", r.Amount is the amount to
// settle, at most the authorization's permitted amount
// (ReasonUptoExceedsAmount otherwise).
func (f *Facilitator) Settle(_ context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if p != nil && p.Accepted.Scheme == x402.SchemeUpto && r.Scheme == x402.SchemeUpto {
		return f.settleUpto(p, r), nil
	}
	c, vr := f.check(p, r, r.Amount)
	if vr != nil {
		return &x402.SettleResponse{ErrorReason: vr.InvalidReason, ErrorMessage: vr.InvalidMessage, Payer: vr.Payer, Network: r.Network}, nil
	}
	tx := keccak([]byte("vouch local settlement"), []byte(c.key))
	s := Settlement{Scheme: x402.SchemeExact, Transaction: "0x" + hex.EncodeToString(tx[:]), Network: r.Network, Asset: r.Asset, Payer: c.payer, Amount: c.auth.Value, Authorization: c.auth, At: f.now()}
	if !f.record(c.key, s) {
		return &x402.SettleResponse{ErrorReason: ReasonNonceAlreadyUsed, ErrorMessage: "the authorization was already settled", Payer: c.payer, Network: r.Network}, nil
	}
	return &x402.SettleResponse{Success: true, Payer: c.payer, Transaction: s.Transaction, Network: r.Network, Amount: c.auth.Value}, nil
}

// record keeps s as the settlement of the authorization key, and reports
// false, keeping nothing, when key was settled before.
func (f *Facilitator) record(key string, s Settlement) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.used[key] {
		return false
	}
	if f.used == nil {
		f.used = make(map[string]bool)
	}
	f.used[key] = true
	f.settled = append(f.settled, s)
	return true
}

// Supported lists "exact" in both versions on each accepted network, and
// "upto" in version 2 with the facilitator's address in
// extra.facilitatorAddress.
func (f *Facilitator) Supported(context.Context) (*x402.SupportedResponse, error) {
	addr := f.address().String()
	out := &x402.SupportedResponse{Extensions: []string{}, Signers: map[string][]string{"eip155:*": {addr}}}
	for _, n := range f.networks() {
		if v1, ok := x402.NetworkV1(n); ok {
			out.Kinds = append(out.Kinds, x402.SupportedKind{X402Version: x402.Version1, Scheme: x402.SchemeExact, Network: v1})
		}
		if c, ok := x402.NetworkCAIP2(n); ok {
			out.Kinds = append(out.Kinds,
				x402.SupportedKind{X402Version: x402.Version2, Scheme: x402.SchemeExact, Network: c},
				x402.SupportedKind{X402Version: x402.Version2, Scheme: x402.SchemeUpto, Network: c, Extra: map[string]any{ExtraFacilitatorAddress: addr}})
		}
	}
	return out, nil
}

// Settlements returns the settlements recorded so far, oldest first.
func (f *Facilitator) Settlements() []Settlement {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.settled)
}

// checked is a proof that passed check.
type checked struct {
	auth   Authorization
	permit *Permit2Authorization // for "upto"
	payer  string
	key    string // chain, asset, payer and nonce: what the contract keeps
}

func invalid(reason, payer, msg string) *x402.VerifyResponse {
	return &x402.VerifyResponse{InvalidReason: reason, InvalidMessage: msg, Payer: payer}
}

// check runs every check but nonce reuse, and returns a non-nil response
// for an invalid payment. max is the amount an "upto" authorization must
// permit.
func (f *Facilitator) check(p *x402.PaymentPayload, r x402.PaymentRequirements, max string) (checked, *x402.VerifyResponse) {
	var c checked
	if p == nil || p.X402Version != x402.Version1 && p.X402Version != x402.Version2 {
		return c, invalid(ReasonInvalidVersion, "", "x402Version must be 1 or 2")
	}
	upto := p.Accepted.Scheme == x402.SchemeUpto && r.Scheme == x402.SchemeUpto
	if upto && p.X402Version != x402.Version2 {
		return c, invalid(ReasonInvalidVersion, "", "the upto scheme is paid in x402Version 2")
	}
	if !upto && (p.Accepted.Scheme != x402.SchemeExact || r.Scheme != x402.SchemeExact) {
		return c, invalid(ReasonInvalidScheme, "", fmt.Sprintf("scheme %q of the payment and %q of the offer are not both %q or %q", p.Accepted.Scheme, r.Scheme, x402.SchemeExact, x402.SchemeUpto))
	}
	if !x402.SameNetwork(p.Accepted.Network, r.Network) {
		return c, invalid(ReasonInvalidNetwork, "", fmt.Sprintf("the payment is on %q, the offer on %q", p.Accepted.Network, r.Network))
	}
	if !slices.ContainsFunc(f.networks(), func(n string) bool { return x402.SameNetwork(n, r.Network) }) {
		return c, invalid(ReasonInvalidNetwork, "", fmt.Sprintf("network %q is not accepted here", r.Network))
	}
	chain, ok := x402.EVMChainID(r.Network)
	if !ok {
		return c, invalid(ReasonInvalidNetwork, "", fmt.Sprintf("network %q is not an EVM network", r.Network))
	}
	if p.X402Version == x402.Version2 && !strings.EqualFold(p.Accepted.Asset, r.Asset) {
		return c, invalid(ReasonAssetMismatch, "", fmt.Sprintf("the payment is in %q, the offer in %q", p.Accepted.Asset, r.Asset))
	}
	if upto {
		return f.checkUpto(p, r, max)
	}
	var ep ExactPayload
	dec := json.NewDecoder(bytes.NewReader(p.Payload))
	if err := dec.Decode(&ep); err != nil {
		return c, invalid(ReasonInvalidPayload, "", "payload: "+err.Error())
	}
	a := ep.Authorization
	c.auth, c.payer = a, a.From
	if _, err := ParseAddress(a.From); err != nil {
		return c, invalid(ReasonInvalidPayload, "", "authorization.from: "+err.Error())
	}
	to, err := ParseAddress(a.To)
	if err != nil {
		return c, invalid(ReasonInvalidPayload, a.From, "authorization.to: "+err.Error())
	}
	payTo, err := ParseAddress(r.PayTo)
	if err != nil {
		return c, invalid(ReasonInvalidOffer, a.From, "payTo: "+err.Error())
	}
	if to != payTo {
		return c, invalid(ReasonRecipient, a.From, fmt.Sprintf("the authorization pays %s, the offer asks for %s", to, payTo))
	}
	value, vok := new(big.Int).SetString(a.Value, 10)
	price, pok := new(big.Int).SetString(r.Amount, 10)
	if !pok {
		return c, invalid(ReasonInvalidOffer, a.From, fmt.Sprintf("amount %q is not a number", r.Amount))
	}
	if !vok || value.Cmp(price) < 0 {
		return c, invalid(ReasonValue, a.From, fmt.Sprintf("the authorization is for %s, the price is %s", a.Value, r.Amount))
	}
	// The token contract takes both times as uint256 and requires
	// now > validAfter and now < validBefore, both strictly (EIP-3009):
	// a validBefore however far ahead is not expired.
	now := big.NewInt(f.now().Unix())
	after, aerr := uint256Int(a.ValidAfter)
	before, berr := uint256Int(a.ValidBefore)
	switch {
	case aerr != nil:
		return c, invalid(ReasonValidAfter, a.From, "authorization.validAfter: "+aerr.Error())
	case after.Cmp(now) >= 0:
		return c, invalid(ReasonValidAfter, a.From, fmt.Sprintf("the authorization is valid only after %s", a.ValidAfter))
	case berr != nil:
		return c, invalid(ReasonValidBefore, a.From, "authorization.validBefore: "+berr.Error())
	case before.Cmp(now) <= 0:
		return c, invalid(ReasonValidBefore, a.From, fmt.Sprintf("the authorization expired at %s", a.ValidBefore))
	}
	d := Domain{Name: r.ExtraString("name"), Version: r.ExtraString("version"), ChainID: chain, VerifyingContract: r.Asset}
	if d.Name == "" || d.Version == "" {
		return c, invalid(ReasonInvalidOffer, a.From, "the offer lacks extra.name and extra.version")
	}
	digest, err := TransferDigest(d, a)
	if err != nil {
		return c, invalid(ReasonInvalidPayload, a.From, err.Error())
	}
	signer, err := recoverAsContract(digest, ep.Signature)
	if err != nil {
		return c, invalid(ReasonSignature, a.From, err.Error())
	}
	from, _ := ParseAddress(a.From)
	if signer != from {
		return c, invalid(ReasonSignature, a.From, "the signature is not from authorization.from")
	}
	nonce, _ := parseHex32(a.Nonce) // TransferDigest parsed it
	asset, _ := ParseAddress(r.Asset)
	var key []byte
	key = binary.BigEndian.AppendUint64(key, chain)
	key = append(append(append(key, asset[:]...), from[:]...), nonce[:]...)
	c.key = string(key)
	c.payer = from.String()
	return c, nil
}
