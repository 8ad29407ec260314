package trustmcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
)

// recoveringLedger is an escrow ledger on which a recovery runs just
// before each verdict is recorded: a recovery on another server, with a
// Grace shorter than the tool's work, voids the hold while the tool runs.
type recoveringLedger struct {
	x402.EscrowLedger
	rec *escrow.Recovery
}

func (l recoveringLedger) Decide(ctx context.Context, id, verdict, capture string) (x402.EscrowPayment, error) {
	if _, err := l.rec.Finish(ctx); err != nil {
		return x402.EscrowPayment{}, err
	}
	return l.EscrowLedger.Decide(ctx, id, verdict, capture)
}

// The call whose payment a recovery voided while the tool ran is
// answered as its retries are, and as x402.Middleware answers it: the
// payment was voided without a verdict, and nothing was bought; the
// escrow report names no verdict, as the ledger records none, and the
// payer is charged nothing. Before, the call was told that its verdict
// could not be recorded, "so" its hold was voided, as if the server had
// voided it, and the report named the tool's verdict, reached after the
// void, as if it were why the payment was voided.
func TestPaywall_escrowVoidedWhileWorking(t *testing.T) {
	r := newEscrowRigWith(t, func(cfg *trustmcp.PaywallConfig) {
		rec := &escrow.Recovery{Ledger: cfg.Escrow.Ledger, Facilitator: cfg.Facilitator, Authorizer: cfg.Escrow.Authorizer, Grace: time.Nanosecond}
		cfg.Escrow.Ledger = recoveringLedger{EscrowLedger: cfg.Escrow.Ledger, rec: rec}
	})
	open := r.bed.Balances()
	p := r.pay(t, "square")
	type answer struct {
		State    x402.EscrowState
		Verdict  string
		Captured string
	}
	const says = "the payment was voided without a verdict: nothing was bought"
	var got []answer
	for range 2 {
		res, err := paidCall(context.Background(), t, r.cs, "square", 3, p)
		if err != nil {
			t.Fatal(err)
		}
		sr := settlementOf(t, res)
		e, ok := x402.EscrowFromSettlement(&sr)
		if !ok {
			t.Fatalf("no escrow report in %+v", sr)
		}
		if !strings.Contains(text(res), says) {
			t.Errorf("%q, want it to say %q", text(res), says)
		}
		got = append(got, answer{e.State, e.Verdict, e.Captured})
	}
	want := answer{x402.EscrowVoided, "", "0"}
	if diff := cmp.Diff([]answer{want, want}, got); diff != "" {
		t.Errorf("the call and its retry (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(open, r.bed.Balances()); diff != "" {
		t.Errorf("balances (-before +after):\n%s", diff)
	}
}
