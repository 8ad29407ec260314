package router_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// payerKey is a key made up for the tests; it holds nothing on any
// network.
const payerKey = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"

// countingPayer counts the proofs an evm.Payer signs.
type countingPayer struct {
	*evm.Payer
	n atomic.Int32
}

func (p *countingPayer) Pay(ctx context.Context, o x402.PaymentRequirements) (x402.Proof, error) {
	p.n.Add(1)
	return p.Payer.Pay(ctx, o)
}

// TestClient_paidCallFaults sends a paid validate v2 through
// router.Client over x402.Transport to a router.Handler behind the x402
// middleware and the offline facilitator, with a fault injected into the
// paid attempt (the first attempt is the unpaid one, answered 402). In
// every case the payer signs one proof, the facilitator settles at most
// once, the worker runs at most once, and a failure reaches the caller as
// an *x402.PaymentError naming the payment.
func TestClient_paidCallFaults(t *testing.T) {
	tests := []struct {
		name        string
		fault       fault
		wantSettled int
		wantRuns    int64
		wantOK      bool
	}{
		{"503 before the run: retried with the same proof", status503, 1, 1, true},
		{"reset before the run: retried with the same proof", resetEarly, 1, 1, true},
		{"answer lost after settling: not paid again", dropAfterRun, 1, 1, false},
		{"502 after settling: not paid again", badGatewayAfterRun, 1, 1, false},
		{"500 before the run: not retried, not settled", status500, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fac := &evm.Facilitator{}
			offer, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
			if err != nil {
				t.Fatal(err)
			}
			mw, err := x402.Middleware(x402.MiddlewareConfig{
				Facilitator: fac,
				Routes:      map[string]x402.Price{"POST /api/v2/x402/validate": {Accepts: []x402.PaymentRequirements{offer}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
			h, err := router.NewHandler(newEngine(t, routertest.Sessions(1, 1, rec)), router.WithX402(mw))
			if err != nil {
				t.Fatal(err)
			}
			fi := &faultInjector{next: h, script: []fault{pass, tt.fault}}
			srv := httptest.NewServer(fi)
			defer srv.Close()

			p, err := evm.NewPayer(payerKey)
			if err != nil {
				t.Fatal(err)
			}
			payer := &countingPayer{Payer: p}
			c, err := router.NewClient(srv.URL,
				router.WithClientVariant(router.VariantX402),
				router.WithHTTPClient(&http.Client{Transport: &x402.Transport{Payer: payer}}),
				router.WithRetry(router.RetryPolicy{Max: 3, WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond}))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			got, err := c.ValidateV2(ctx, validateV2(1))

			if tt.wantOK {
				if err != nil || got.Verdict != router.VerdictValid {
					t.Errorf("ValidateV2 = %+v, %v; want VALID", got, err)
				}
			} else {
				var pe *x402.PaymentError
				var re *router.Error
				switch {
				case err == nil:
					t.Errorf("ValidateV2 succeeded, want the fault reported")
				case tt.wantSettled > 0 && (!errors.As(err, &pe) || pe.Reference == ""):
					t.Errorf("error %v (%T), want an *x402.PaymentError with the payment's reference", err, err)
				case tt.wantSettled == 0 && !errors.As(err, &re):
					t.Errorf("error %v (%T), want a *router.Error", err, err)
				}
			}
			if n := payer.n.Load(); n != 1 {
				t.Errorf("the payer signed %d proofs, want 1", n)
			}
			if n := len(fac.Settlements()); n != tt.wantSettled {
				t.Errorf("the facilitator settled %d times, want %d", n, tt.wantSettled)
			}
			if n := rec.Calls.Load(); n != tt.wantRuns {
				t.Errorf("the worker ran %d times, want %d", n, tt.wantRuns)
			}
		})
	}
}
