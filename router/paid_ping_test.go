package router_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestClient_paidPingLostAnswerIsNotPaidAgain loses the answer of a paid
// x402 Ping after the server settled it (the connection reset, or a 502
// from a proxy): the Client's retry, a GET without a body, carries the
// proof of the first attempt rather than a second payment, so the payer
// signs once and the facilitator settles once.
func TestClient_paidPingLostAnswerIsNotPaidAgain(t *testing.T) {
	for _, tt := range []struct {
		name  string
		fault fault
	}{
		{"answer lost after settling", dropAfterRun},
		{"502 after settling", badGatewayAfterRun},
	} {
		t.Run(tt.name, func(t *testing.T) {
			offer, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.0001")
			if err != nil {
				t.Fatal(err)
			}
			fac := &evm.Facilitator{}
			mw, err := x402.Middleware(x402.MiddlewareConfig{
				Facilitator: fac,
				Routes:      map[string]x402.Price{"GET /api/v1/x402/ping": {Accepts: []x402.PaymentRequirements{offer}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			h, err := router.NewHandler(&fakeService{}, router.WithX402(mw))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(&faultInjector{next: h, script: []fault{pass, tt.fault}})
			defer srv.Close()
			p, err := evm.NewPayer(payerKey)
			if err != nil {
				t.Fatal(err)
			}
			payer := &countingPayer{Payer: p}
			budget := x402.NewBudget(1 << 20)
			c, err := router.NewClient(srv.URL, router.WithClientVariant(router.VariantX402),
				router.WithHTTPClient(&http.Client{Transport: &x402.Transport{Payer: payer, Budget: budget}}),
				router.WithRetry(router.RetryPolicy{Max: 3, WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond}))
			if err != nil {
				t.Fatal(err)
			}
			// The server keeps no answer of a ping to deliver again: the
			// retry's proof is refused as used, and the caller learns
			// which payment the call made.
			var pe *x402.PaymentError
			if err := c.Ping(context.Background()); err != nil && (!errors.As(err, &pe) || pe.Reference == "") {
				t.Errorf("Ping: %v (%T), want success or an *x402.PaymentError naming the payment", err, err)
			}
			if n := payer.n.Load(); n != 1 {
				t.Errorf("the payer signed %d proofs, want 1", n)
			}
			if got := budget.Spent(); got != 100 {
				t.Errorf("spent %d, want 100 (one payment)", got)
			}
			if n := len(fac.Settlements()); n != 1 {
				t.Errorf("the facilitator settled %d times, want 1", n)
			}
		})
	}
}
