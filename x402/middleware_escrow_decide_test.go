package x402_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// decideFails is a ledger that cannot record a verdict.
type decideFails struct{ x402.EscrowLedger }

func (decideFails) Decide(context.Context, string, string, string) (x402.EscrowPayment, error) {
	return x402.EscrowPayment{}, errors.New("the ledger is unreachable")
}

// An answer whose verdict the ledger could not record is not captured,
// and so not delivered: the hold is voided and the buyer is told, and a
// retry of the proof gets the same, not the answer for nothing.
func TestMiddleware_escrowVerdictNotRecorded(t *testing.T) {
	s := newEscrowServerWith(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) },
		func(cfg *x402.MiddlewareConfig) { cfg.Escrow.Ledger = decideFails{cfg.Escrow.Ledger} }, evm.TransferEIP3009)
	proof := s.proof(t)
	for i := range 2 {
		resp, body := s.paid(t, proof)
		if resp.StatusCode < 400 || strings.Contains(body, "Paris") {
			t.Errorf("use %d: status %d, %q; want a refusal without the answer", i, resp.StatusCode, body)
		}
		if _, e := escrowOf(t, resp); e.State != x402.EscrowVoided || e.Captured != "0" {
			t.Errorf("use %d: report %+v; want the hold voided", i, e)
		}
	}
	if payer, _ := s.balances(); payer != openBalance {
		t.Errorf("the payer holds %d, want %d", payer, openBalance)
	}
	if n := s.runs.Load(); n != 1 {
		t.Errorf("the handler ran %d times", n)
	}
}
