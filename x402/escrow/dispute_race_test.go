package escrow_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/vouchkit/vouch/x402"
)

// duringRefund is a facilitator that runs during, once the first refund
// it relays was answered and before its answer is returned.
type duringRefund struct {
	x402.Facilitator
	during func()
	once   atomic.Bool
}

func (f *duringRefund) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	sr, err := f.Facilitator.Settle(ctx, p, r)
	if strings.Contains(string(p.Payload), `"type":"refund"`) && f.once.CompareAndSwap(false, true) {
		f.during()
	}
	return sr, err
}

// A report that comes while another report's refund of the same payment
// is under way waits for it, and gets its outcome: it never sends a
// refund of its own, which the escrow would refuse as made against a
// state it no longer holds, and which, recorded first, would leave the
// ledger saying nothing was refunded while the first refund moved money.
// The policy here, asked again, answers another amount, as one that
// depends on the time may.
func TestDisputes_reportDuringARefundWaitsForIt(t *testing.T) {
	bed, d, _, ps := disputeBed(t, 1, nil)
	var asked atomic.Int64
	d.Policy = func(context.Context, x402.EscrowPayment) (string, error) {
		return strconv.FormatInt(1000*asked.Add(1), 10), nil
	}
	before := bed.Balances()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var second struct {
			o        x402.EscrowOutcome
			refunded bool
			err      error
		}
		done := make(chan struct{})
		d.Facilitator = &duringRefund{Facilitator: bed.Escrow, during: func() {
			go func() {
				defer close(done)
				second.o, second.refunded, second.err = d.Report(ctx, "alice", "receipt-0", false)
			}()
			synctest.Wait() // the second report has run, or waits
		}}
		first, refunded, err := d.Report(ctx, "alice", "trace-0", false)
		<-done
		if err != nil || !refunded || first.Amount != "1000" {
			t.Errorf("first report: %+v, %v, %v; want 1000 refunded", first, refunded, err)
		}
		if second.err != nil || !second.refunded || second.o.Settlement.Transaction != first.Settlement.Transaction {
			t.Errorf("second report: %+v, %v, %v; want the first refund", second.o, second.refunded, second.err)
		}
	})
	p, err := d.Ledger.Get(t.Context(), ps[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	moved := bed.Balances().Payer - before.Payer
	if p.Refunded != strconv.FormatInt(moved, 10) || asked.Load() != 1 {
		t.Errorf("the ledger says %s refunded, the payer got %d back; the policy was asked %d times, want once", p.Refunded, moved, asked.Load())
	}
}
