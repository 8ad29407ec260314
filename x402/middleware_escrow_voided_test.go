package x402_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
)

// A hold that a recovery voids, without a verdict, while its work still
// runs (a Grace shorter than the work) stays voided: the verdict the work
// reaches afterwards is not recorded on it, and the payment and every
// retry of its proof are answered alike that it was voided without a
// verdict and nothing was bought, with an escrow report that names no
// verdict, as the ledger holds none. Before, the verdict was recorded on
// the voided payment, whose capture then failed on every retry, the
// outcome pending for good; then the first use was told that its verdict
// could not be recorded, as if this server had voided it; and the report
// named the work's verdict, as if it were why the payment was voided.
func TestMiddleware_escrowVoidedWhileWorking(t *testing.T) {
	noLeak(t)
	var s *escrowServer
	authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
	s = newEscrowServerWith(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) {
		rec := &escrow.Recovery{Ledger: s.ledger, Facilitator: s.escrow, Authorizer: evm.ReceiverAuthorizer{Key: authorizer}, Grace: time.Nanosecond}
		if _, err := rec.Finish(r.Context()); err != nil {
			t.Error(err)
		}
		w.Write([]byte("Paris"))
	}, nil, evm.TransferEIP3009)
	proof := s.proof(t)
	got, id := escrowAnswers(t, s, proof, 3)
	first := escrowAnswer{http.StatusPaymentRequired, "the payment was voided without a verdict: nothing was bought", x402.EscrowVoided, "", "0", true}
	if diff := cmp.Diff([]escrowAnswer{first, first, first}, got); diff != "" {
		t.Errorf("the use and retries of a payment voided while its work ran (-want +got):\n%s", diff)
	}
	p, err := s.ledger.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	payer, _ := s.balances()
	if diff := cmp.Diff([]any{x402.EscrowVoided, "", "", int64(openBalance), int32(1)}, []any{p.State, p.Verdict, p.Capture, payer, s.runs.Load()}); diff != "" {
		t.Errorf("payment state, verdict, capture, payer's balance, handler runs (-want +got):\n%s", diff)
	}
}
