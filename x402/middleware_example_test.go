package x402_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A route that costs $0.001 in USDC. A plain client is answered 402 with
// the terms; a client whose Transport pays is served, and reads the
// settlement from the response. The facilitator is the offline one of
// package evm, which checks signatures and moves nothing.
func ExampleMiddleware() {
	price, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		log.Fatal(err)
	}
	paywall, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: &evm.Facilitator{},
		Routes:      map[string]x402.Price{"GET /report": {Accepts: []x402.PaymentRequirements{price}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(paywall(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "the report")
	})))
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/report")
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("without payment:", resp.StatusCode)

	payer, err := evm.NewPayer("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318") // made up, holds nothing
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: &x402.Transport{Payer: payer}}
	resp, err = client.Get(srv.URL + "/report")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	sr, err := x402.SettlementFromResponse(resp)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("paid: %d %q, settled %v on %s\n", resp.StatusCode, body, sr.Success, sr.Network)
	// Output:
	// without payment: 402
	// paid: 200 "the report", settled true on eip155:84532
}
