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

// decideLost is a ledger whose Decide records the verdict and then
// reports an error, as a commit whose acknowledgement was lost does.
type decideLost struct{ x402.EscrowLedger }

func (l decideLost) Decide(ctx context.Context, id, verdict, capture string) (x402.EscrowPayment, error) {
	if _, err := l.EscrowLedger.Decide(ctx, id, verdict, capture); err != nil {
		return x402.EscrowPayment{}, err
	}
	return x402.EscrowPayment{}, errors.New("connection lost at commit")
}

// A verdict the ledger recorded though it reported an error is the
// payment's verdict, which a recovery acts on: the route reads it back
// and captures and delivers by it, rather than void and refuse while a
// recovery may capture the hold, charging for an answer never sent.
func TestMiddleware_escrowVerdictRecordedDespiteError(t *testing.T) {
	s := newEscrowServerWith(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) },
		func(cfg *x402.MiddlewareConfig) { cfg.Escrow.Ledger = decideLost{cfg.Escrow.Ledger} }, evm.TransferEIP3009)
	resp, body := s.paid(t, s.proof(t))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Paris") {
		t.Fatalf("status %d, %q; want the answer, captured", resp.StatusCode, body)
	}
	if _, e := escrowOf(t, resp); e.State != x402.EscrowCaptured {
		t.Errorf("report %+v; want the hold captured", e)
	}
	if payer, _ := s.balances(); payer == openBalance {
		t.Errorf("the payer holds %d: nothing was captured", payer)
	}
}
