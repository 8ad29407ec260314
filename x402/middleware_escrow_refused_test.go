package x402_test

import (
	"context"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// drainingFacilitator empties the payer's balance once the payment is
// verified, so that the hold is refused.
type drainingFacilitator struct {
	*evm.Escrow
	token, payer evm.Address
}

func (f drainingFacilitator) Verify(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	vr, err := f.Escrow.Verify(ctx, p, r)
	f.Fund(f.token, f.payer, new(big.Int).Neg(f.Balance(f.token, f.payer)))
	return vr, err
}

// A hold the facilitator refuses is answered 402 with the refused hold in
// PAYMENT-RESPONSE, and the handler never runs; so is a payment the
// facilitator does not verify.
func TestMiddleware_escrowAuthorizeRefused(t *testing.T) {
	for _, drain := range []bool{false, true} {
		open := int64(0) // refused at verification
		if drain {
			open = openBalance // verified, then refused at the hold
		}
		s := newEscrowServer(t, open, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("work")) })
		if drain {
			s.facilitate(t, drainingFacilitator{Escrow: s.escrow, token: s.token, payer: s.payer.Address()})
		}
		resp, _ := s.paid(t, s.proof(t))
		if resp.StatusCode != http.StatusPaymentRequired {
			t.Fatalf("drain %v: status %d, want 402", drain, resp.StatusCode)
		}
		if drain {
			sr, err := x402.DecodeSettleResponse(resp.Header.Get(x402.HeaderPaymentResponse))
			if err != nil || sr.Success || sr.ErrorReason != evm.ReasonAuthCaptureInsufficientBal {
				t.Errorf("settlement %+v, %v; want the refused hold", sr, err)
			}
		}
		if n := s.runs.Load(); n != 0 {
			t.Errorf("drain %v: the handler ran %d times without a hold", drain, n)
		}
		if held, _ := s.ledger.Unfinished(t.Context(), 0); len(held) != 0 {
			t.Errorf("drain %v: %d holds recorded", drain, len(held))
		}
	}
}

// A payment whose capture deadline is not one the route offers is refused
// before any hold.
func TestMiddleware_escrowDeadlineRefused(t *testing.T) {
	s := newEscrowServer(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) })
	proof := s.proof(t)
	p, _ := x402.DecodePaymentPayload(proof)
	p.Accepted.Extra["captureDeadline"] = p.Accepted.Extra["captureDeadline"].(float64) + 86400
	forged, _ := x402.EncodeHeader(p)
	resp, _ := s.paid(t, forged)
	pr, _ := x402.DecodePaymentRequired(resp.Header.Get(x402.HeaderPaymentRequired))
	if resp.StatusCode != http.StatusPaymentRequired || pr == nil || !strings.Contains(pr.Error, "invalid_auth_capture_deadline") {
		t.Fatalf("status %d, terms %+v; want 402 invalid_auth_capture_deadline", resp.StatusCode, pr)
	}
	if s.runs.Load() != 0 {
		t.Error("the handler ran")
	}
}

// An escrow route the server could not hold and finish in time is a
// configuration error: no Escrow, a route settled before its work, a
// capture window shorter than the offer's validity, the time budget and
// two settlements, or longer than MaxValidity (a hold is finished while
// the server remembers its proof).
func TestMiddleware_escrowConfig(t *testing.T) {
	authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
	operator, _ := evm.ParseAddress(evm.OfflineFacilitatorAddress)
	offer, err := evm.AuthCaptureUSDC("base-sepolia", payTo, "$0.05", operator, authorizer.Address())
	if err != nil {
		t.Fatal(err)
	}
	escrow := func(window time.Duration) *x402.EscrowConfig {
		return &x402.EscrowConfig{Authorizer: evm.ReceiverAuthorizer{Key: authorizer}, CaptureWindow: window}
	}
	for _, tc := range []struct {
		name        string
		escrow      *x402.EscrowConfig
		before      bool
		maxValidity time.Duration
		says        string
	}{
		{"no escrow", nil, false, 0, "needs MiddlewareConfig.Escrow"},
		{"no authorizer", &x402.EscrowConfig{}, false, 0, "needs MiddlewareConfig.Escrow"},
		{"settle before", escrow(0), true, 0, "SettleBefore"},
		{"window too short", escrow(100 * time.Second), false, 0, "shorter than"},
		{"window beyond MaxValidity", escrow(2 * time.Hour), false, time.Hour, "longer than MaxValidity"},
		{"fine", escrow(0), false, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := x402.Middleware(x402.MiddlewareConfig{
				Facilitator: &evm.Escrow{}, Escrow: tc.escrow, MaxValidity: tc.maxValidity,
				Routes: map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{offer}, SettleBefore: tc.before}},
			})
			if tc.says == "" {
				if err != nil {
					t.Fatalf("Middleware: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Middleware = %v, want an error saying %q", err, tc.says)
			}
		})
	}
}
