package x402_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/x402"
)

// settleCounter counts the operations sent to a facilitator for
// settlement (an escrow's authorize, capture and void among them).
type settleCounter struct {
	x402.Facilitator
	n *atomic.Int32
}

func (c settleCounter) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	c.n.Add(1)
	return c.Facilitator.Settle(ctx, p, r)
}

// TestMiddleware_escrowGatedBodyTooLarge: on a gated "auth-capture"
// route, a request body larger than the gate reads is refused before any
// hold is asked for: 413, the handler not run, nothing sent to the
// facilitator for settlement and nothing held, so the payer's proof is
// not spent on a request that could never be served.
func TestMiddleware_escrowGatedBodyTooLarge(t *testing.T) {
	noLeak(t)
	gate := &x402.DeliveryGate{MaxRequestBody: 4, Check: func(context.Context, *http.Request, []byte, *x402.BufferedResponse) x402.Delivery {
		return x402.Delivery{Deliver: true}
	}}
	s := newEscrowServer(t, openBalance, gate, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) })
	var settles atomic.Int32
	s.facilitate(t, settleCounter{s.escrow, &settles})
	resp, body := s.paid(t, s.proof(t)) // a body of 17 bytes
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413: %s", resp.StatusCode, body)
	}
	if n := settles.Load(); n != 0 {
		t.Errorf("%d operations sent for settlement, want none (no hold for a body the gate cannot read)", n)
	}
	if n := s.runs.Load(); n != 0 {
		t.Errorf("the handler ran %d times", n)
	}
	if payer, receiver := s.balances(); payer != openBalance || receiver != openBalance {
		t.Errorf("balances payer %d, receiver %d, want %d each: nothing held or moved", payer, receiver, openBalance)
	}
}
