package x402_test

import (
	"encoding/json"
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
	type answer struct {
		Status   int
		Detail   string
		State    x402.EscrowState
		Verdict  string
		Captured string
	}
	var (
		got []answer
		id  string
	)
	for range 2 {
		resp, body := s.paid(t, proof)
		var p struct {
			Detail string `json:"detail"`
		}
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatalf("%d %q: %v", resp.StatusCode, body, err)
		}
		_, e := escrowOf(t, resp)
		id = e.ID
		got = append(got, answer{resp.StatusCode, p.Detail, e.State, e.Verdict, e.Captured})
	}
	want := answer{http.StatusPaymentRequired, "the payment's verdict could not be recorded, so its hold was voided: nothing was bought", x402.EscrowVoided, "", "0"}
	if diff := cmp.Diff([]answer{want, want}, got); diff != "" {
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
