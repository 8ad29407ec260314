package x402_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// deadlineFacilitator is the offline facilitator that records how long
// each Verify was given (0 for no deadline).
type deadlineFacilitator struct {
	*evm.Facilitator
	given chan time.Duration
}

func (f *deadlineFacilitator) Verify(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	var d time.Duration
	if dl, ok := ctx.Deadline(); ok {
		d = time.Until(dl)
	}
	f.given <- d
	return f.Facilitator.Verify(ctx, p, r)
}

// A verification is bounded by the settlement's time
// (MiddlewareConfig.SettleTimeout): a facilitator that never answers
// one would hold the request, and its reservation of the proof, for as
// long as the payer waits.
func TestMiddleware_verifyIsBounded(t *testing.T) {
	fac := &deadlineFacilitator{Facilitator: &evm.Facilitator{}, given: make(chan time.Duration, 1)}
	u := newPaidServer(t, serverOptions{facilitator: fac}, echo).URL
	if resp := send(t, u, x402.HeaderPaymentSignature, proof(t, 2, nil)); resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d, want 200", resp.StatusCode)
	}
	if d := <-fac.given; d <= 0 || d > x402.DefaultSettleTimeout {
		t.Errorf("verify was given %v, want a deadline within DefaultSettleTimeout (%v)", d, x402.DefaultSettleTimeout)
	}
}
