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
// payment was voided without a verdict, and nothing was bought. Before,
// it was told that its verdict could not be recorded, "so" its hold was
// voided, as if the server had voided it.
func TestPaywall_escrowVoidedWhileWorkingSaysSo(t *testing.T) {
	r := newEscrowRigWith(t, func(cfg *trustmcp.PaywallConfig) {
		rec := &escrow.Recovery{Ledger: cfg.Escrow.Ledger, Facilitator: cfg.Facilitator, Authorizer: cfg.Escrow.Authorizer, Grace: time.Nanosecond}
		cfg.Escrow.Ledger = recoveringLedger{EscrowLedger: cfg.Escrow.Ledger, rec: rec}
	})
	open := r.bed.Balances()
	p := r.pay(t, "square")
	var got []string
	for range 2 {
		res, err := paidCall(context.Background(), t, r.cs, "square", 3, p)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, text(res))
	}
	want := "the payment was voided without a verdict: nothing was bought"
	for i, g := range got {
		if !strings.Contains(g, want) {
			t.Errorf("call %d: %q, want it to say %q", i, g, want)
		}
	}
	if diff := cmp.Diff(open, r.bed.Balances()); diff != "" {
		t.Errorf("balances (-before +after):\n%s", diff)
	}
}
