package evm

import (
	"fmt"

	"github.com/vouchkit/vouch/x402"
)

// USDCDecimals is the number of decimals of USDC.
const USDCDecimals = 6

// DefaultMaxTimeoutSeconds is the maxTimeoutSeconds of offers built by
// USDC, as in the protocol's examples.
const DefaultMaxTimeoutSeconds = 60

// usdc returns the USDC contract and EIP-712 domain on a network, after the
// official SDKs' default assets.
func usdc(caip2 string) (address, name, version string, ok bool) {
	switch caip2 {
	case "eip155:84532": // Base Sepolia
		return "0x036CbD53842c5426634e7929541eC2318f3dCF7e", "USDC", "2", true
	case "eip155:8453": // Base
		return "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "USD Coin", "2", true
	case "eip155:137": // Polygon
		return "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359", "USD Coin", "2", true
	}
	return "", "", "", false
}

// USDC returns an "exact" offer of price, in dollars ("$0.001"), paid in
// USDC on network (Base Sepolia, Base or Polygon, in either naming) to
// payTo. The offer names its network in CAIP-2 and carries the token's
// EIP-712 domain in extra, so that official x402 clients can pay it.
func USDC(network, payTo, price string) (x402.PaymentRequirements, error) {
	caip2, _ := x402.NetworkCAIP2(network)
	asset, name, version, ok := usdc(caip2)
	if !ok {
		return x402.PaymentRequirements{}, fmt.Errorf("evm: no known USDC contract on network %q", network)
	}
	to, err := ParseAddress(payTo)
	if err != nil {
		return x402.PaymentRequirements{}, fmt.Errorf("evm: payTo: %w", err)
	}
	amount, err := x402.ParsePrice(price, USDCDecimals)
	if err != nil {
		return x402.PaymentRequirements{}, err
	}
	return x402.PaymentRequirements{
		Scheme:            x402.SchemeExact,
		Network:           caip2,
		Amount:            amount,
		Asset:             asset,
		PayTo:             to.String(),
		MaxTimeoutSeconds: DefaultMaxTimeoutSeconds,
		Extra:             map[string]any{"name": name, "version": version},
	}, nil
}

// UptoUSDC returns an "upto" offer of at most maxPrice, in dollars, paid
// in USDC on network to payTo and settled by the facilitator at
// facilitator (a [Facilitator]'s Address, or the facilitatorAddress a
// facilitator's /supported reports for "upto"; see
// [x402.FacilitatorAddress]). The payer authorizes the whole maxPrice;
// the server settles what the call used.
func UptoUSDC(network, payTo, maxPrice, facilitator string) (x402.PaymentRequirements, error) {
	o, err := USDC(network, payTo, maxPrice)
	if err != nil {
		return o, err
	}
	fa, err := ParseAddress(facilitator)
	if err != nil {
		return x402.PaymentRequirements{}, fmt.Errorf("evm: facilitator: %w", err)
	}
	o.Scheme = x402.SchemeUpto
	o.Extra[ExtraFacilitatorAddress] = fa.String()
	o.Extra["assetTransferMethod"] = "permit2"
	return o, nil
}
