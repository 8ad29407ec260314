package x402_test

import (
	"net/http"
	"testing"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
)

// Disputes through the Middleware: the handler of an "auth-capture" route records
// which payment its call belongs to (PaymentOf); the call is
// delivered and captured; its caller's later report that the answer was
// wrong refunds the payer, by the seller's policy, and the escrow's
// balances show it.
func TestMiddleware_escrowDisputes(t *testing.T) {
	noLeak(t)
	authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
	var d *escrow.Disputes
	s := newEscrowServer(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) {
		id, ok := escrow.PaymentOf(r.Context(), evm.ReceiverAuthorizer{Key: authorizer})
		if !ok {
			t.Error("PaymentOf found no payment")
		}
		d.Paid("alice", id, "trace-1")
		w.Write([]byte("Paris"))
	})
	d = &escrow.Disputes{Ledger: s.ledger, Facilitator: s.escrow, Authorizer: evm.ReceiverAuthorizer{Key: authorizer}, Policy: escrow.RefundWhole}
	resp, _ := s.paid(t, s.proof(t))
	if _, e := escrowOf(t, resp); resp.StatusCode != http.StatusOK || e.State != x402.EscrowCaptured {
		t.Fatalf("status %d, escrow %+v; want the answer captured", resp.StatusCode, e)
	}
	if payer, receiver := s.balances(); payer != openBalance-50_000 || receiver != openBalance+50_000 {
		t.Fatalf("after the capture: payer %d, receiver %d", payer, receiver)
	}
	o, refunded, err := d.Report(t.Context(), "alice", "trace-1", false)
	if err != nil || !refunded || !o.Settlement.Success || o.Amount != "50000" {
		t.Fatalf("dispute: %+v, %v, %v", o, refunded, err)
	}
	if payer, _ := s.balances(); payer != openBalance {
		t.Errorf("after the refund the payer holds %d, want %d", payer, openBalance)
	}
}
