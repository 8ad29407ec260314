package trustmcp_test

import (
	"context"
	"errors"
	"strings"
	"testing"

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
