package x402

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// DefaultMaxAmount is the most a [Policy] with a zero MaxAmount pays for one
// call: 100000 atomic units, which is 0.10 USDC (6 decimals), the default
// cap of the official x402 fetch client.
const DefaultMaxAmount = 100000

// DefaultMaxTimeoutSeconds is the longest authorization a [Policy] with
// a zero MaxTimeoutSeconds lets a payer sign: ten minutes. Payers sign an
// authorization valid for the offer's maxTimeoutSeconds, as the official
// clients do; they set no bound on it.
const DefaultMaxTimeoutSeconds = 600

// Policy is what a [Transport] may pay. Its zero value is safe: it allows
// the "exact" scheme on the known test networks only, in the well-known
// asset of each (USDC), up to DefaultMaxAmount per call, for offers whose
// maxTimeoutSeconds is at most DefaultMaxTimeoutSeconds. A host opts into
// mainnets and other assets by listing them.
//
// For comparison, the official x402 fetch client of version 1 caps a
// payment at 0.10 USDC by default, pays on the network of the wallet it
// is given, prefers USDC offers but pays any asset, and signs
// authorizations valid for the offer's maxTimeoutSeconds, unbounded.
type Policy struct {
	// Schemes lists the schemes allowed; nil means only "exact". List
	// "upto" to pay usage-priced offers: an "upto" offer's amount is the
	// most the server may settle, and the payer authorizes all of it, so
	// MaxAmount and the Budget apply to that maximum. List "auth-capture"
	// to pay offers that hold the payment in escrow, where the same holds
	// of the amount held.
	Schemes []string
	// Networks lists the networks allowed, in either naming ("base-sepolia"
	// and "eip155:84532" are the same network); nil means the known test
	// networks ([IsTestnet]).
	Networks []string
	// Assets lists the asset addresses allowed, compared without regard to
	// case; nil means the well-known asset of the offer's network (USDC,
	// see [KnownAsset]).
	Assets []string
	// MaxAmount is the most to pay for one call, in atomic units of the
	// asset; zero means DefaultMaxAmount.
	MaxAmount uint64
	// MaxTimeoutSeconds is the longest validity an offer may ask for an
	// authorization (its maxTimeoutSeconds); zero means
	// DefaultMaxTimeoutSeconds. A [Transport] has the payer sign an offer
	// that asks for none (zero or below) for this limit.
	MaxTimeoutSeconds int
}

// Allows returns nil if p allows paying offer, or an error saying why not.
func (p *Policy) Allows(offer PaymentRequirements) error {
	schemes := p.Schemes
	if schemes == nil {
		schemes = []string{SchemeExact}
	}
	if !slices.Contains(schemes, offer.Scheme) {
		return fmt.Errorf("scheme %q is not allowed", offer.Scheme)
	}
	switch {
	case p.Networks == nil && !IsTestnet(offer.Network):
		return fmt.Errorf("network %q is not a test network; list it in Policy.Networks to pay there", offer.Network)
	case p.Networks != nil && !slices.ContainsFunc(p.Networks, func(n string) bool { return SameNetwork(n, offer.Network) }):
		return fmt.Errorf("network %q is not allowed", offer.Network)
	}
	switch {
	case p.Assets == nil && !KnownAsset(offer.Network, offer.Asset):
		return fmt.Errorf("asset %q is not a well-known asset of network %q; list it in Policy.Assets to pay in it", offer.Asset, offer.Network)
	case p.Assets != nil && !slices.ContainsFunc(p.Assets, func(a string) bool { return strings.EqualFold(a, offer.Asset) }):
		return fmt.Errorf("asset %q is not allowed", offer.Asset)
	}
	if maxTimeout := p.maxTimeout(); offer.MaxTimeoutSeconds > maxTimeout {
		return fmt.Errorf("maxTimeoutSeconds %d is above the limit of %d on an authorization's validity", offer.MaxTimeoutSeconds, maxTimeout)
	}
	amount, err := ParseAmount(offer.Amount)
	if err != nil {
		return err
	}
	limit := p.MaxAmount
	if limit == 0 {
		limit = DefaultMaxAmount
	}
	if amount > limit {
		return fmt.Errorf("%w: amount %d is above the limit of %d per call", ErrAmountAboveLimit, amount, limit)
	}
	return nil
}

// maxTimeout returns the longest validity, in seconds, that p lets a payer
// sign.
func (p *Policy) maxTimeout() int {
	if p.MaxTimeoutSeconds == 0 {
		return DefaultMaxTimeoutSeconds
	}
	return p.MaxTimeoutSeconds
}

// KnownAsset reports whether asset is the well-known stablecoin of the
// network (in either naming): the USDC contract issued by Circle on
// Base, Base Sepolia, Polygon, Polygon Amoy, Avalanche Fuji and Ethereum
// Sepolia.
func KnownAsset(network, asset string) bool {
	caip2, _ := NetworkCAIP2(network)
	var usdc string
	switch caip2 {
	case "eip155:84532": // Base Sepolia
		usdc = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
	case "eip155:8453": // Base
		usdc = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	case "eip155:137": // Polygon
		usdc = "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359"
	case "eip155:80002": // Polygon Amoy
		usdc = "0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582"
	case "eip155:43113": // Avalanche Fuji
		usdc = "0x5425890298aed601595a70AB815c96711a31Bc65"
	case "eip155:11155111": // Ethereum Sepolia
		usdc = "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"
	default:
		return false
	}
	return strings.EqualFold(usdc, asset)
}

// SelectFunc chooses which offer of a 402 answer to pay for req, or
// declines with an error, which the Transport returns to its caller. The
// offers are those the Payer can pay, in the server's order; the Transport
// checks the choice against its Policy afterwards, so a SelectFunc can
// prefer but never widen. When the terms list offers and the Payer can pay
// none of them, the Transport declines without asking the SelectFunc,
// with an error that says why each offer is not paid.
type SelectFunc func(req *http.Request, policy *Policy, offers []PaymentRequirements) (PaymentRequirements, error)

// DefaultSelect returns the first offer policy allows, or an error wrapping
// ErrNoAcceptableOffer that says why each offer was refused.
func DefaultSelect(_ *http.Request, policy *Policy, offers []PaymentRequirements) (PaymentRequirements, error) {
	var why []error
	for _, o := range offers {
		err := policy.Allows(o)
		if err == nil {
			return o, nil
		}
		why = append(why, fmt.Errorf("%s %s on %s: %w", o.Scheme, o.Amount, o.Network, err))
	}
	if len(why) == 0 {
		return PaymentRequirements{}, fmt.Errorf("%w: the terms list no offer this payer can pay", ErrNoAcceptableOffer)
	}
	return PaymentRequirements{}, fmt.Errorf("%w: %w", ErrNoAcceptableOffer, errors.Join(why...))
}

// unpayable returns an error wrapping ErrNoAcceptableOffer that says why
// each of the offers, none of which the payer can pay, is not paid: the
// policy's reason, or else the payer's refusal.
func unpayable(policy *Policy, offers []PaymentRequirements) error {
	why := make([]error, len(offers))
	for i, o := range offers {
		err := policy.Allows(o)
		if err == nil {
			err = errors.New("the payer cannot pay it")
		}
		why[i] = fmt.Errorf("%s %s on %s: %w", o.Scheme, o.Amount, o.Network, err)
	}
	return fmt.Errorf("%w: %w", ErrNoAcceptableOffer, errors.Join(why...))
}

// Budget is a total that several calls, and several Transports, spend
// from. Amounts are atomic units of whatever asset is paid, so a budget is
// meaningful when the Policy allows one asset. It is safe for concurrent
// use; a nil *Budget is unlimited.
type Budget struct {
	mu           sync.Mutex
	total, spent uint64
}

// NewBudget returns a budget of total atomic units.
func NewBudget(total uint64) *Budget {
	return &Budget{total: total}
}

// Spend takes amount from the budget, or returns an error wrapping
// ErrBudgetExceeded and takes nothing.
func (b *Budget) Spend(amount uint64) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if amount > b.total-b.spent {
		return fmt.Errorf("%w: %d wanted, %d of %d left", ErrBudgetExceeded, amount, b.total-b.spent, b.total)
	}
	b.spent += amount
	return nil
}

// Refund gives back amount taken by Spend for a payment that never left
// the process.
func (b *Budget) Refund(amount uint64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spent -= min(amount, b.spent)
}

// Spent returns the amount spent so far.
func (b *Budget) Spent() uint64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent
}

// Remaining returns what is left to spend.
func (b *Budget) Remaining() uint64 {
	if b == nil {
		return ^uint64(0)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total - b.spent
}
