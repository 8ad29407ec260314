package x402_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A verdict the ledger did not record voids the hold, and the escrow
// report of the void names no verdict, as the ledger records none: the
// payment was voided because no verdict could be recorded, not for the
// work's verdict. Before, the report named the work's verdict
// ("delivered", or the gate's VALID) beside "state":"voided", as if that
// verdict were why the payment was voided, on the first use and on the
// retry.
func TestMiddleware_escrowUnrecordedVerdictReportsNone(t *testing.T) {
	noLeak(t)
	s := newEscrowServerWith(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) },
		func(cfg *x402.MiddlewareConfig) { cfg.Escrow.Ledger = decideFails{cfg.Escrow.Ledger} }, evm.TransferEIP3009)
	proof := s.proof(t)
	got, id := escrowAnswers(t, s, proof, 2)
	want := escrowAnswer{http.StatusPaymentRequired, "the payment's verdict could not be recorded, so its hold was voided: nothing was bought", x402.EscrowVoided, "", "0", true}
	if diff := cmp.Diff([]escrowAnswer{want, want}, got); diff != "" {
		t.Errorf("the use and retry of a payment whose verdict was not recorded (-want +got):\n%s", diff)
	}
	p, err := s.ledger.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	payer, _ := s.balances()
	if diff := cmp.Diff([]any{x402.EscrowVoided, "", int64(openBalance)}, []any{p.State, p.Verdict, payer}); diff != "" {
		t.Errorf("the ledger's state and verdict, the payer's balance (-want +got):\n%s", diff)
	}
}
