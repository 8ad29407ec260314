package evm_test

import (
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// An x402 route paid in escrow ("auth-capture"): the payment is held in
// the offline escrow before the handler runs, captured when the answer is
// delivered and voided when the handler fails, the payer's balance given
// back.
func ExampleReceiverAuthorizer() {
	authorizer, _ := evm.ParsePrivateKey("0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba")
	operator, _ := evm.ParseAddress(evm.OfflineFacilitatorAddress)
	offer, _ := evm.AuthCaptureUSDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.01", operator, authorizer.Address())

	escrow := &evm.Escrow{OpenBalance: big.NewInt(1_000_000)} // every address starts with 1 USDC
	paywall, _ := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: escrow,
		Routes:      map[string]x402.Price{"POST /answer": {Accepts: []x402.PaymentRequirements{offer}}},
		Escrow:      &x402.EscrowConfig{Authorizer: evm.ReceiverAuthorizer{Key: authorizer}},
	})
	srv := httptest.NewServer(paywall(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("fail") {
			http.Error(w, "no answer", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "42")
	})))
	defer srv.Close()

	payer, _ := evm.NewPayer("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	client := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
	usdc, _ := evm.ParseAddress(offer.Asset)
	for _, path := range []string{"/answer", "/answer?fail"} {
		resp, err := client.Post(srv.URL+path, "text/plain", strings.NewReader("question"))
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		sr, _ := x402.DecodeSettleResponse(resp.Header.Get(x402.HeaderPaymentResponse))
		e, _ := x402.EscrowFromSettlement(sr)
		fmt.Printf("%-13s %d %-8s held %s, captured %s; the payer holds %s\n", path, resp.StatusCode, e.State, e.Held, e.Captured, escrow.Balance(usdc, payer.Address()))
	}
	// Output:
	// /answer       200 captured held 10000, captured 10000; the payer holds 990000
	// /answer?fail  500 voided   held 10000, captured 0; the payer holds 990000
}
