package trustmcp_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
)

// decideFails is a ledger that cannot record a verdict.
type decideFails struct{ x402.EscrowLedger }

func (decideFails) Decide(context.Context, string, string, string) (x402.EscrowPayment, error) {
	return x402.EscrowPayment{}, errors.New("the ledger is unreachable")
}

// A result whose verdict the ledger could not record is not captured,
// and so not delivered: the hold is voided and the caller is told, and a
// retry of the payment gets the same, not the result for nothing.
func TestPaywall_escrowVerdictNotRecorded(t *testing.T) {
	r := newEscrowRigWith(t, func(cfg *trustmcp.PaywallConfig) { cfg.Escrow.Ledger = decideFails{cfg.Escrow.Ledger} })
	open := r.bed.Balances()
	p := r.pay(t, "square")
	for i := range 2 {
		res, err := paidCall(context.Background(), t, r.cs, "square", 3, p)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || strings.Contains(text(res), `"square":9`) {
			t.Errorf("use %d: result %q (isError %v), want a refusal without the square", i, text(res), res.IsError)
		}
		if _, e := reportOf(t, res); e.State != x402.EscrowVoided || e.Captured != "0" {
			t.Errorf("use %d: report %+v, want the hold voided", i, e)
		}
	}
	if got := r.bed.Balances(); got != open {
		t.Errorf("balances %+v, want those before the hold %+v", got, open)
	}
	if n := r.runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times", n)
	}
}

// The escrow report of a call whose verdict the ledger did not record
// names no verdict, as over HTTP: the hold was voided because no verdict
// could be recorded, not for the tool's. Before, it named the tool's
// (VALID) beside "state":"voided", as if a VALID verdict voided the
// hold, on the call and on its retry.
func TestPaywall_escrowUnrecordedVerdictReportsNone(t *testing.T) {
	r := newEscrowRigWith(t, func(cfg *trustmcp.PaywallConfig) { cfg.Escrow.Ledger = decideFails{cfg.Escrow.Ledger} })
	p := r.pay(t, "square")
	type answer struct {
		State    x402.EscrowState
		Verdict  string
		Captured string
	}
	var got []answer
	for range 2 {
		res, err := paidCall(context.Background(), t, r.cs, "square", 3, p)
		if err != nil {
			t.Fatal(err)
		}
		_, e := reportOf(t, res)
		got = append(got, answer{e.State, e.Verdict, e.Captured})
	}
	want := answer{x402.EscrowVoided, "", "0"}
	if diff := cmp.Diff([]answer{want, want}, got); diff != "" {
		t.Errorf("the call and its retry (-want +got):\n%s", diff)
	}
}
