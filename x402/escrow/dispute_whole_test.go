package escrow_test

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/x402test"
)

// A dispute's refund by RefundWhole, on its way while a seller's own
// refund of the payment reaches the escrow and is recorded, asks more
// than the payment has left once the seller's is recorded. The escrow
// refuses it, and that refusal is recorded as any other, though its
// amount is above what is left (it moved nothing): the report returns it,
// and a later report refunds the rest, as when the refusal is recorded
// first (TestDisputes_refusalBeforeAnotherRefundIsNotFinal). Before, the
// ledger would not record the refusal, and the report failed with
// x402.ErrEscrowAmount, documented as sending nothing, after a refund was
// sent.
func TestDisputes_wholeRefusedAfterAnotherRefundIsRecorded(t *testing.T) {
	ctx := t.Context()
	const manual = 1000
	bed, d, _, ps := disputeBed(t, 1, escrow.RefundWhole)
	d.Facilitator = &beforeRefund{Facilitator: d.Facilitator, before: func() {
		o, _, err := x402.SettleEscrow(ctx, d.Ledger, bed.Facilitator, bed.Authorizer, ps[0].ID, "seller-refund", x402.EscrowRefund, strconv.Itoa(manual))
		if err != nil || !o.Settlement.Success {
			t.Fatalf("the seller's refund: %+v, %v", o, err)
		}
	}}
	before := bed.Balances()
	type result struct {
		Err      string
		Refunded bool
		Success  bool
		Amount   string
	}
	report := func() result {
		o, refunded, err := d.Report(ctx, "alice", "trace-0", false)
		r := result{Refunded: refunded, Success: o.Settlement.Success, Amount: o.Amount}
		if err != nil {
			r.Err = err.Error()
		}
		return r
	}
	got := []result{report(), report()}
	want := []result{
		{Amount: strconv.Itoa(x402test.EscrowHoldAmount)},                                         // refused, recorded
		{Refunded: true, Success: true, Amount: strconv.Itoa(x402test.EscrowHoldAmount - manual)}, // the rest
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reports racing the seller's refund, and after it (-want +got):\n%s", diff)
	}
	if back := bed.Balances().Payer - before.Payer; back != x402test.EscrowHoldAmount {
		t.Errorf("the payer got %d back, want %d", back, x402test.EscrowHoldAmount)
	}
}
