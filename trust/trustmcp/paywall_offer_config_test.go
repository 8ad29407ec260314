package trustmcp_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestPaywall_refusesOffersNoPayerCanPay: an offer the terms would show
// with no network (a misspelt one), no scheme, payTo or asset, or an
// amount that is no atomic amount (dollars written as a decimal) is a
// configuration no payer can pay, whatever its scheme: Paywall refuses it
// naming the tool and the offer, as x402.Middleware refuses it on a
// route, rather than serving terms that cannot be met.
func TestPaywall_refusesOffersNoPayerCanPay(t *testing.T) {
	good, err := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.005")
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(o *x402.PaymentRequirements){
		"network": func(o *x402.PaymentRequirements) { o.Network = "base-sepola" },
		"scheme":  func(o *x402.PaymentRequirements) { o.Scheme = "" },
		"payTo":   func(o *x402.PaymentRequirements) { o.PayTo = "" },
		"asset":   func(o *x402.PaymentRequirements) { o.Asset = "" },
		"amount":  func(o *x402.PaymentRequirements) { o.Amount = "0.005" },
	}
	got := make(map[string]bool)
	want := make(map[string]bool)
	for name, mutate := range bad {
		o := good
		mutate(&o)
		_, err := trustmcp.Paywall(trustmcp.PaywallConfig{Facilitator: &evm.Facilitator{},
			Prices: map[string]x402.Price{"arbitrate": {Accepts: []x402.PaymentRequirements{good, o}}}})
		got[name] = err != nil && strings.Contains(err.Error(), `Prices["arbitrate"]: offer 1`)
		want[name] = true
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Paywall refused naming the tool and offer (-want +got):\n%s", diff)
	}
}
