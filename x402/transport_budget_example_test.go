package x402_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A Transport that declines to pay returns an error instead of the 402
// answer. The error reaches the caller of http.Client.Do inside a
// *url.Error, and errors.Is still finds the sentinel; Permanent tells an
// outer retry policy to stop. Here the route costs 1000 atomic units
// ($0.001 in USDC) and the Budget holds 500, so nothing is paid.
func ExampleTransport_budget() {
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

	payer, err := evm.NewPayer("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318") // made up, holds nothing
	if err != nil {
		log.Fatal(err)
	}
	budget := x402.NewBudget(500)
	client := &http.Client{Transport: &x402.Transport{Payer: payer, Budget: budget}}
	resp, err := client.Get(srv.URL + "/report")
	if err == nil {
		resp.Body.Close()
		log.Fatal("paid beyond the budget")
	}
	var uerr *url.Error
	fmt.Println("a *url.Error:", errors.As(err, &uerr))
	fmt.Println("budget exceeded:", errors.Is(err, x402.ErrBudgetExceeded))
	fmt.Println("permanent:", x402.Permanent(err))
	fmt.Println("spent:", budget.Spent(), "remaining:", budget.Remaining())
	// Output:
	// a *url.Error: true
	// budget exceeded: true
	// permanent: true
	// spent: 0 remaining: 500
}

// A Transport without a Payer never pays: the 402 answer comes back to the
// caller as it is, with the terms, and no error.
func ExampleTransport_noPayer() {
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

	client := &http.Client{Transport: &x402.Transport{}}
	resp, err := client.Get(srv.URL + "/report")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	terms, err := x402.ReadPaymentRequired(resp)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.StatusCode, terms.Accepts[0].Amount, terms.Accepts[0].Network)
	// Output:
	// 402 1000 eip155:84532
}
