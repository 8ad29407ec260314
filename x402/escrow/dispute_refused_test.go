package escrow_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
)

// A seller's own refund of the payment that reaches the escrow, and is
// recorded, while a dispute's refund is on its way makes the escrow
// refuse the dispute's, made against the balance before it. The refusal
// answered a balance the seller's refund changed, as when it is recorded
// first (TestDisputes_refusalBeforeAnotherRefundIsNotFinal): a later
// report sends the dispute's refund again, and the payer gets back both
// refunds.
func TestDisputes_refusalAfterAnotherRefundIsNotFinal(t *testing.T) {
	ctx := t.Context()
	const disputed, manual = 2000, 1000
	policy := func(context.Context, x402.EscrowPayment) (string, error) { return strconv.Itoa(disputed), nil }
	bed, d, _, ps := disputeBed(t, 1, policy)
	d.Facilitator = &beforeRefund{Facilitator: d.Facilitator, before: func() {
		// The seller's refund, settled and recorded before the dispute's
		// reaches the escrow.
		o, _, err := x402.SettleEscrow(ctx, d.Ledger, bed.Facilitator, bed.Authorizer, ps[0].ID, "seller-refund", x402.EscrowRefund, strconv.Itoa(manual))
		if err != nil || !o.Settlement.Success {
			t.Fatalf("the seller's refund: %+v, %v", o, err)
		}
	}}
	before := bed.Balances()
	refused, refunded, err := d.Report(ctx, "alice", "trace-0", false)
	if err != nil || refunded || refused.Settlement.Success {
		t.Fatalf("report racing the seller's refund = %+v, %v, %v; want a refusal", refused, refunded, err)
	}
	o, refunded, err := d.Report(ctx, "alice", "trace-0", false)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		Refunded     bool
		Amount       string
		SameKey      bool
		PayerGotBack int64
	}
	got := result{refunded, o.Amount, o.Key == refused.Key, bed.Balances().Payer - before.Payer}
	want := result{true, strconv.Itoa(disputed), false, disputed + manual}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report after the refusal (-want +got):\n%s", diff)
	}
}
