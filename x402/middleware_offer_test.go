package x402_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestMiddleware_v1ProofPaysTheOfferItNames: a version 1 proof names only
// scheme and network; the middleware must match the offer whose payTo and
// amount the signed authorization carries, not the first offer on that
// network.
func TestMiddleware_v1ProofPaysTheOfferItNames(t *testing.T) {
	first := offer(t)
	second := offer(t)
	second.PayTo = "0x857b06519E91e3A54538791bDbb0E22373e36b66"
	second.Amount = "2500"
	fac := &evm.Facilitator{}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{first, second}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(http.HandlerFunc(echo)))
	t.Cleanup(srv.Close)

	for _, tc := range []struct {
		name string
		pay  x402.PaymentRequirements
	}{
		{"second offer", second},
		{"first offer", first},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.pay
			o.Network = "base-sepolia"
			pr, err := newPayer(t).Pay(t.Context(), o)
			if err != nil {
				t.Fatal(err)
			}
			v, err := x402.EncodeHeader(x402.PaymentPayload{X402Version: x402.Version1, Accepted: o, Payload: pr.Payload})
			if err != nil {
				t.Fatal(err)
			}
			resp := send(t, srv.URL, x402.HeaderXPayment, v)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status = %d (%q), want 200", resp.StatusCode, resp.Header.Get(x402.HeaderXPaymentResponse))
			}
			s, err := x402.SettlementFromResponse(resp)
			if err != nil || s.Amount != tc.pay.Amount {
				t.Errorf("settlement = %+v, %v; want the amount %s of the offer paid", s, err, tc.pay.Amount)
			}
		})
	}
}
