package x402_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A hold the escrow ledger cannot record (here a memory ledger full of
// a captured payment) is voided at once: the payer's funds leave the
// escrow, the request is answered 503 and the handler does not run.
func TestMiddleware_escrowHoldUnrecordedIsVoided(t *testing.T) {
	ledger := &x402.MemoryEscrowLedger{MaxPayments: 1}
	s := newEscrowServerWith(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) },
		func(cfg *x402.MiddlewareConfig) { cfg.Escrow.Ledger = ledger }, evm.TransferEIP3009)
	if resp, body := s.paid(t, s.proof(t)); resp.StatusCode != http.StatusOK {
		t.Fatalf("first payment: status %d: %s", resp.StatusCode, body)
	}
	resp, body := s.paid(t, s.proof(t)) // the ledger is full: the hold cannot be recorded
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("second payment: status %d: %s; want 503", resp.StatusCode, body)
	}
	type state struct {
		Payer, Receiver int64
		Runs            int32
	}
	payer, receiver := s.balances()
	got := state{payer, receiver, s.runs.Load()}
	want := state{openBalance - 50_000, openBalance + 50_000, 1} // the first payment's capture only
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after a hold the ledger could not record (-want +got):\n%s", diff)
	}
}
