package escrow_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/x402test"
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

// beforeRefund is a facilitator that runs before, once, when the first
// refund it is asked to relay arrives, before relaying it.
type beforeRefund struct {
	x402.Facilitator
	before func()
	once   atomic.Bool
}

func (f *beforeRefund) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if strings.Contains(string(p.Payload), `"type":"refund"`) && f.once.CompareAndSwap(false, true) {
		f.before()
	}
	return f.Facilitator.Settle(ctx, p, r)
}

// A seller's own refund of the payment, sent while a dispute's refund
// is on its way and recorded after it, makes the escrow refuse the
// dispute's (it asks more than is left), and the refusal is recorded
// first. It answered a balance the seller's refund was changing: a
// later report sends the dispute's refund again, by the policy, of what
// is left. A refusal no other refund followed stays the dispute's
// outcome.
func TestDisputes_refusalBeforeAnotherRefundIsNotFinal(t *testing.T) {
	ctx := t.Context()
	bed, d, _, ps := disputeBed(t, 1, escrow.RefundWhole)
	const manual = 1000
	var sellers x402.EscrowOutcome
	d.Facilitator = &beforeRefund{Facilitator: d.Facilitator, before: func() {
		p, err := d.Ledger.Get(ctx, ps[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		payload, err := bed.Authorizer.Consent(p, x402.EscrowRefund, strconv.Itoa(manual))
		if err != nil {
			t.Fatal(err)
		}
		sr, err := bed.Facilitator.Settle(ctx, payload, p.Offer)
		if err != nil || !sr.Success {
			t.Fatalf("the seller's refund: %+v, %v", sr, err)
		}
		sellers = x402.EscrowOutcome{Key: "seller-refund", Operation: x402.EscrowRefund, Amount: strconv.Itoa(manual), Settlement: *sr}
	}}
	before := bed.Balances()
	refused, refunded, err := d.Report(ctx, "alice", "trace-0", false)
	if err != nil || refunded || refused.Settlement.Success {
		t.Fatalf("report racing the seller's refund = %+v, %v, %v; want a refusal", refused, refunded, err)
	}
	if again, _, err := d.Report(ctx, "alice", "trace-0", false); err != nil || again.Key != refused.Key {
		t.Fatalf("report before the seller's refund is recorded = %+v, %v; want the refusal again", again, err)
	}
	if _, _, _, err := d.Ledger.Record(ctx, ps[0].ID, sellers); err != nil {
		t.Fatal(err)
	}
	o, refunded, err := d.Report(ctx, "alice", "trace-0", false)
	if err != nil || !refunded {
		t.Fatalf("report after it = %+v, %v, %v; want the rest refunded", o, refunded, err)
	}
	if want := strconv.Itoa(x402test.EscrowHoldAmount - manual); o.Amount != want || o.Key == refused.Key {
		t.Errorf("the dispute refunded %s under %q, want %s under a key of its own", o.Amount, o.Key, want)
	}
	if got := bed.Balances().Payer - before.Payer; got != x402test.EscrowHoldAmount {
		t.Errorf("the payer got %d back, want %d", got, x402test.EscrowHoldAmount)
	}
	if again, refunded, err := d.Report(ctx, "alice", "trace-0", false); err != nil || !refunded || again.Settlement.Transaction != o.Settlement.Transaction {
		t.Errorf("report once refunded = %+v, %v, %v; want the refund replayed", again, refunded, err)
	}
}
