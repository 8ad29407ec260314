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
			v := v1Proof(t, tc.pay)
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

// eurc is the EURC contract on Base Sepolia, with its EIP-712 domain.
const eurc = "0x808456652fdb597867f38412077A9182bf77359F"

// TestMiddleware_v1ProofPaysTheAssetItSigned: two offers share network,
// payTo and amount and differ only in asset (USDC and EURC). A version 1
// proof names no asset; the middleware picks the offer whose EIP-712
// domain the signature verifies under, settles it in that asset, and
// recognises a repeat of the settled proof as one.
func TestMiddleware_v1ProofPaysTheAssetItSigned(t *testing.T) {
	usdc := offer(t)
	euro := offer(t)
	euro.Asset = eurc
	euro.Extra = map[string]any{"name": "EURC", "version": "2"}
	fac := &evm.Facilitator{}
	k := &keeper{}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{usdc, euro}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(k))
	t.Cleanup(srv.Close)

	for i, pay := range []x402.PaymentRequirements{euro, usdc} {
		v := v1Proof(t, pay)
		key := "call-" + pay.Asset
		resp, _ := sendKeyed(t, srv.URL, x402.HeaderXPayment, v, key)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status = %d (%q), want 200", pay.Asset, resp.StatusCode, resp.Header.Get(x402.HeaderPaymentRequired))
		}
		if s := fac.Settlements(); len(s) != i+1 || s[i].Asset != pay.Asset {
			t.Fatalf("settlements %+v, want the last in %s", s, pay.Asset)
		}
		again, body := sendKeyed(t, srv.URL, x402.HeaderXPayment, v, key)
		if again.StatusCode != http.StatusOK || body != "x served" {
			t.Errorf("%s: repeat of the settled proof: %d %q, want the kept answer", pay.Asset, again.StatusCode, body)
		}
	}
	if n, s := k.served.Load(), len(fac.Settlements()); n != 2 || s != 2 {
		t.Errorf("handler ran %d times, %d settlements; want 2 and 2", n, s)
	}
}

// v1Proof returns a version 1 proof paying offer, which names only scheme
// and network.
func v1Proof(t *testing.T, offer x402.PaymentRequirements) string {
	t.Helper()
	offer.Network = "base-sepolia"
	pr, err := newPayer(t).Pay(t.Context(), offer)
	if err != nil {
		t.Fatal(err)
	}
	v, err := x402.EncodeHeader(x402.PaymentPayload{X402Version: x402.Version1, Accepted: offer, Payload: pr.Payload})
	if err != nil {
		t.Fatal(err)
	}
	return v
}
