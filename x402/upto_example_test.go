package x402_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A route priced with "upto": the buyer authorizes at most $0.005, the
// handler reports what the call used, and only that is settled.
func ExampleReportUsage() {
	offer, err := evm.UptoUSDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.005", evm.OfflineFacilitatorAddress)
	if err != nil {
		log.Fatal(err)
	}
	paywall, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: &evm.Facilitator{},
		Routes:      map[string]x402.Price{"POST /generate": {Accepts: []x402.PaymentRequirements{offer}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(paywall(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// 3 units of work at 400 each.
		if err := x402.ReportUsage(r.Context(), x402.Usage{Amount: 1200, Units: 3, Unit: "page"}); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		io.WriteString(w, "three pages")
	})))
	defer srv.Close()

	payer, _ := evm.NewPayer("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318") // made up, holds nothing
	client := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeUpto}}}}
	resp, err := client.Post(srv.URL+"/generate", "text/plain", strings.NewReader("write"))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	sr, _ := x402.SettlementFromResponse(resp)
	u, _ := x402.UsageFromSettlement(sr)
	fmt.Printf("settled %s of %d for %d %ss\n", sr.Amount, u.MaxAmount, u.Units, u.Unit)
	// Output: settled 1200 of 5000 for 3 pages
}
