package x402_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A handler that keeps its answers for a retry keeps one only once its
// payment settled.
func ExampleAfterSettle() {
	offer, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		log.Fatal(err)
	}
	paywall, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: &evm.Facilitator{},
		Routes:      map[string]x402.Price{"POST /summarize": {Accepts: []x402.PaymentRequirements{offer}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	var mu sync.Mutex
	kept := map[string]string{} // by Idempotency-Key
	srv := httptest.NewServer(paywall(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, answer := r.Header.Get("Idempotency-Key"), "a summary"
		x402.AfterSettle(r.Context(), func(settled bool) {
			if settled {
				mu.Lock()
				kept[key] = answer
				mu.Unlock()
			}
		})
		io.WriteString(w, answer)
	})))
	defer srv.Close()

	payer, _ := evm.NewPayer("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318") // made up, holds nothing
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/summarize", strings.NewReader("a text"))
	req.Header.Set("Idempotency-Key", "call-1")
	resp, err := (&http.Client{Transport: &x402.Transport{Payer: payer}}).Do(req)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	fmt.Printf("%d, kept %q\n", resp.StatusCode, kept["call-1"])
	mu.Unlock()
	// Output: 200, kept "a summary"
}
