package x402_test

import (
	"testing"

	"github.com/vouchkit/vouch/x402"
)

// TestPolicy_zeroValueIsSafe: the zero Policy pays USDC on test networks
// only, within DefaultMaxAmount, and never signs an authorization valid
// longer than DefaultMaxTimeout.
func TestPolicy_zeroValueIsSafe(t *testing.T) {
	usdcBaseSepolia := x402.PaymentRequirements{Scheme: "exact", Network: "eip155:84532", Amount: "1000",
		Asset: "0x036cbd53842c5426634e7929541ec2318f3dcf7e", PayTo: payTo, MaxTimeoutSeconds: 60}
	with := func(f func(o *x402.PaymentRequirements)) x402.PaymentRequirements {
		o := usdcBaseSepolia
		f(&o)
		return o
	}
	for _, tc := range []struct {
		name   string
		policy x402.Policy
		offer  x402.PaymentRequirements
		ok     bool
	}{
		{"USDC on base-sepolia", x402.Policy{}, usdcBaseSepolia, true},
		{"v1 network name", x402.Policy{}, with(func(o *x402.PaymentRequirements) { o.Network = "base-sepolia" }), true},
		{"USDC on polygon-amoy", x402.Policy{}, with(func(o *x402.PaymentRequirements) {
			o.Network, o.Asset = "polygon-amoy", "0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582"
		}), true},
		{"USDC on base mainnet", x402.Policy{}, with(func(o *x402.PaymentRequirements) {
			o.Network, o.Asset = "eip155:8453", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
		}), false},
		{"mainnet opted in", x402.Policy{Networks: []string{"base"}}, with(func(o *x402.PaymentRequirements) {
			o.Network, o.Asset = "eip155:8453", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
		}), true},
		{"unknown asset on a test network", x402.Policy{}, with(func(o *x402.PaymentRequirements) { o.Asset = "0x0000000000000000000000000000000000000001" }), false},
		{"base-sepolia USDC address on another test network", x402.Policy{}, with(func(o *x402.PaymentRequirements) { o.Network = "polygon-amoy" }), false},
		{"unknown asset opted in", x402.Policy{Assets: []string{"0x0000000000000000000000000000000000000001"}},
			with(func(o *x402.PaymentRequirements) { o.Asset = "0x0000000000000000000000000000000000000001" }), true},
		{"authorization lifetime at the cap", x402.Policy{}, with(func(o *x402.PaymentRequirements) { o.MaxTimeoutSeconds = 600 }), true},
		{"authorization lifetime above the cap", x402.Policy{}, with(func(o *x402.PaymentRequirements) { o.MaxTimeoutSeconds = 601 }), false},
		{"lifetime cap raised", x402.Policy{MaxTimeoutSeconds: 3600}, with(func(o *x402.PaymentRequirements) { o.MaxTimeoutSeconds = 3600 }), true},
		{"amount above the default cap", x402.Policy{}, with(func(o *x402.PaymentRequirements) { o.Amount = "100001" }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.policy.Allows(tc.offer)
			if (err == nil) != tc.ok {
				t.Errorf("Allows = %v, want ok %v", err, tc.ok)
			}
		})
	}
}
