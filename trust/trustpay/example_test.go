package trustpay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A seller's route that delivers, and is paid for, only the answers a
// trust validation finds VALID: an upper-casing service judged by workers
// that check the claim is the input in capitals.
func ExampleGate() {
	upper := router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		in, _ := job.TaskInput.String()
		var claim string
		json.Unmarshal(job.Claim.Output, &claim)
		if claim != strings.ToUpper(in) {
			return &router.Result{Verdict: router.VerdictInvalid, Confidence: 0.9}, nil
		}
		return &router.Result{Verdict: router.VerdictValid, Confidence: 0.9}, nil
	})
	engine, err := router.NewEngine([]router.Session{{ID: 1, Worker: upper}, {ID: 2, Worker: upper}, {ID: 3, Worker: upper}})
	if err != nil {
		log.Fatal(err)
	}
	svc, err := trust.New(engine)
	if err != nil {
		log.Fatal(err)
	}
	offer, _ := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	fac := &evm.Facilitator{}
	paywall, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Routes: map[string]x402.Price{"POST /upper": {
			Accepts: []x402.PaymentRequirements{offer},
			Gate:    trustpay.Gate(trustpay.Route{Caller: svc, Policy: trust.PolicySafe, Spec: trust.JSON("the input in capitals")}),
		}},
	})
	if err != nil {
		log.Fatal(err)
	}
	// The seller gets words with a digit wrong.
	srv := httptest.NewServer(paywall(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		out := strings.ToUpper(string(body))
		if strings.ContainsAny(out, "0123456789") {
			out = strings.ToLower(out)
		}
		json.NewEncoder(w).Encode(out)
	})))
	defer srv.Close()

	payer, _ := evm.NewPayer("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318") // made up, holds nothing
	client := &http.Client{Transport: &x402.Transport{Payer: payer}}
	for _, text := range []string{"hello", "room 101"} {
		resp, err := client.Post(srv.URL+"/upper", "text/plain", strings.NewReader(text))
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		_, err = x402.SettlementFromResponse(resp)
		fmt.Printf("%q: %d %s, settled: %t\n", text, resp.StatusCode, resp.Header.Get(trustpay.HeaderStatus), err == nil)
	}
	fmt.Println("settlements:", len(fac.Settlements()))
	// Output:
	// "hello": 200 VALID, settled: true
	// "room 101": 502 INVALID, settled: false
	// settlements: 1
}
