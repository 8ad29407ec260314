package x402_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
)

// An answer the outcome store cannot keep before its verdict is recorded
// is not captured: the hold is voided and the payer told that nothing was
// bought, as a gated route settles no answer it could not keep. Before,
// the verdict was recorded and the capture sent all the same; when the
// capture then went unanswered (and the store, still down, kept nothing
// after it either), the recovery captured the payment by that verdict,
// while the retry of the proof found no answer: the payer was charged for
// an answer it never got.
func TestMiddleware_escrowUnkeptAnswerIsNotCaptured(t *testing.T) {
	noLeak(t)
	store := &failingKeep{}
	store.fail.Store(true)
	s := newEscrowServerWith(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) },
		func(cfg *x402.MiddlewareConfig) { cfg.Outcomes = store }, evm.TransferEIP3009)
	s.facilitate(t, &unansweredCapture{Escrow: s.escrow})
	proof := s.proof(t)
	first, body := s.paid(t, proof)
	_, e := escrowOf(t, first)
	type use struct {
		Status        int
		Answered      bool
		NothingBought bool
		State         x402.EscrowState
	}
	if diff := cmp.Diff(use{http.StatusPaymentRequired, false, true, x402.EscrowVoided},
		use{first.StatusCode, strings.Contains(body, "Paris"), strings.Contains(body, "nothing was bought"), e.State}); diff != "" {
		t.Errorf("first use while the outcome store is down (-want +got):\n%s", diff)
	}

	store.fail.Store(false) // the store is back; a recovery runs
	authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
	rec := &escrow.Recovery{Ledger: s.ledger, Facilitator: s.escrow, Authorizer: evm.ReceiverAuthorizer{Key: authorizer}}
	if _, err := rec.Finish(t.Context()); err != nil {
		t.Fatal(err)
	}
	retry, body := s.paid(t, proof)
	payer, _ := s.balances()
	type after struct {
		Answered bool
		Payer    int64
		Runs     int32
	}
	if diff := cmp.Diff(after{false, openBalance, 1}, after{strings.Contains(body, "Paris"), payer, s.runs.Load()}); diff != "" {
		t.Errorf("after the recovery, the retry (status %d) and the payer's balance (-want +got):\n%s", retry.StatusCode, diff)
	}
}
