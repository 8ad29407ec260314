package trustpay_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A fast, safe or oracle call paid with an "upto" offer of Fixed keeps
// its fixed price: the whole authorized amount settles, and no usage is
// reported, whatever runs it launched. Before, ChargeRuns charged every
// "upto" payment per run at a fifth of its amount, a price per run no
// one configured (a safe call of 3 runs settled 3000 of 5000).
func TestChargeRuns_fixedUptoKeepsItsPrice(t *testing.T) {
	fixed, err := evm.UptoUSDC("eip155:84532", seller, "$0.005", evm.OfflineFacilitatorAddress)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := trustpay.Prices{Fixed: x402.Price{Accepts: []x402.PaymentRequirements{fixed}}}.PriceFunc(trust.X402CallPath)
	if err != nil {
		t.Fatal(err)
	}
	fac := &evm.Facilitator{}
	paywall, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: fac, PriceFunc: pf})
	if err != nil {
		t.Fatal(err)
	}
	h, err := trust.NewHandler(service(t), trust.WithX402(func(next http.Handler) http.Handler {
		return paywall(trustpay.ChargeRuns(next, nil))
	}))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	out, sr := callTrust(t, srv.URL, trust.PolicySafe, x402.Policy{Schemes: []string{x402.SchemeUpto}})
	_, usage := x402.UsageFromSettlement(sr)
	type result struct {
		Status  trust.Status
		Settled string
		Usage   bool
	}
	if diff := cmp.Diff(result{trust.StatusValid, "5000", false}, result{out.Status, sr.Amount, usage}); diff != "" {
		t.Errorf("a safe call paid with Fixed's upto offer (-want +got):\n%s", diff)
	}
}
