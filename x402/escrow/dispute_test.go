package escrow_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
	"github.com/vouchkit/vouch/x402/x402test"
)

// disputeBed holds and captures n payments on an escrow bed, each paying
// for the call alice made under trace-i and receipt-i.
func disputeBed(t *testing.T, n int, policy escrow.RefundPolicy) (*x402test.EscrowBed, *escrow.Disputes, *countingFacilitator, []x402.EscrowPayment) {
	t.Helper()
	bed := x402test.NewEscrowBed(t)
	l := &x402.MemoryEscrowLedger{}
	f := &countingFacilitator{Facilitator: bed.Facilitator}
	d := &escrow.Disputes{Ledger: l, Facilitator: f, Authorizer: bed.Authorizer, Policy: policy}
	ps := holdN(t, bed, l, n)
	for i, p := range ps {
		if o, _, err := x402.SettleEscrow(t.Context(), l, f, bed.Authorizer, p.ID, x402.EscrowCapture, x402.EscrowCapture, p.Amount); err != nil || !o.Settlement.Success {
			t.Fatalf("capture: %+v, %v", o, err)
		}
		d.Paid("alice", p.ID, "trace-"+string(rune('0'+i)), "receipt-"+string(rune('0'+i)))
	}
	return bed, d, f, ps
}

// A wrong-outcome report from the call's caller refunds the captured
// payment by the seller's policy, once, whether the call is named by its
// trace id or its receipt id; a report that the outcome was right, or
// one from another caller, refunds nothing.
func TestDisputes_refundOnceByPolicy(t *testing.T) {
	ctx := t.Context()
	bed, d, f, ps := disputeBed(t, 1, escrow.RefundWhole)
	before := bed.Balances()
	if _, _, err := d.Report(ctx, "mallory", "trace-0", false); !errors.Is(err, escrow.ErrUnknownCall) {
		t.Errorf("another caller's report = %v, want ErrUnknownCall", err)
	}
	if _, refunded, err := d.Report(ctx, "alice", "trace-0", true); err != nil || refunded {
		t.Errorf("a report of a right outcome = %v, %v; want no refund", refunded, err)
	}
	sent := f.settles.Load()
	o, refunded, err := d.Report(ctx, "alice", "receipt-0", false)
	if err != nil || !refunded || !o.Settlement.Success || o.Amount != ps[0].Amount {
		t.Fatalf("dispute = %+v, %v, %v; want the whole capture refunded", o, refunded, err)
	}
	const hold = x402test.EscrowHoldAmount
	// The operator, who funds refunds, pays the payer back; the receiver
	// keeps the capture (the bed does not track the operator).
	if got, want := bed.Balances(), before.Plus(hold, 0, 0); got != want {
		t.Errorf("balances after the refund %+v, want %+v", got, want)
	}
	again, refunded, err := d.Report(ctx, "alice", "trace-0", false)
	if err != nil || !refunded || again.Settlement.Transaction != o.Settlement.Transaction {
		t.Errorf("second dispute = %+v, %v, %v; want the first refund replayed", again, refunded, err)
	}
	if got := f.settles.Load() - sent; got != 1 {
		t.Errorf("%d refunds sent, want 1", got)
	}
	if got, want := bed.Balances(), before.Plus(hold, 0, 0); got != want {
		t.Errorf("balances after the second dispute %+v, want %+v", got, want)
	}
}

// A dispute whose refund succeeded is over, once per payment, even when
// the seller refunds more of the payment afterwards: a later report
// replays the dispute's refund and sends nothing. Only a refused one is
// sent again after another refund (see
// TestDisputes_refusalBeforeAnotherRefundIsNotFinal).
func TestDisputes_refundedDisputeStaysOver(t *testing.T) {
	ctx := t.Context()
	policy := func(context.Context, x402.EscrowPayment) (string, error) { return "1000", nil }
	bed, d, f, ps := disputeBed(t, 1, policy)
	before := bed.Balances()
	first, refunded, err := d.Report(ctx, "alice", "trace-0", false)
	if err != nil || !refunded || !first.Settlement.Success {
		t.Fatalf("dispute = %+v, %v, %v; want 1000 refunded", first, refunded, err)
	}
	if o, _, err := x402.SettleEscrow(ctx, d.Ledger, f, bed.Authorizer, ps[0].ID, "refund", x402.EscrowRefund, "500"); err != nil || !o.Settlement.Success {
		t.Fatalf("the seller's refund = %+v, %v", o, err)
	}
	sent := f.settles.Load()
	again, refunded, err := d.Report(ctx, "alice", "receipt-0", false)
	if err != nil || !refunded || again.Key != first.Key || again.Settlement.Transaction != first.Settlement.Transaction {
		t.Errorf("report after the seller's refund = %+v, %v, %v; want the dispute's refund (%q) replayed", again, refunded, err, first.Key)
	}
	if got := f.settles.Load() - sent; got != 0 {
		t.Errorf("%d refunds sent after the dispute was refunded, want none", got)
	}
	if got := bed.Balances().Payer - before.Payer; got != 1000+500 {
		t.Errorf("the payer got %d back, want %d (the dispute's 1000 and the seller's 500)", got, 1000+500)
	}
}

// Without a policy nothing is refunded; a policy asking above what was
// captured is refused before anything is sent; after the refund deadline
// nothing is sent; reports racing on one payment refund it once.
func TestDisputes_bounds(t *testing.T) {
	ctx := t.Context()
	t.Run("no policy", func(t *testing.T) {
		bed, d, f, _ := disputeBed(t, 1, nil)
		before, sent := bed.Balances(), f.settles.Load()
		if _, refunded, err := d.Report(ctx, "alice", "trace-0", false); err != nil || refunded || f.settles.Load() != sent || bed.Balances() != before {
			t.Errorf("dispute without a policy: refunded %v, %v, %d sent", refunded, err, f.settles.Load()-sent)
		}
	})
	t.Run("above the capture", func(t *testing.T) {
		_, d, f, _ := disputeBed(t, 1, func(context.Context, x402.EscrowPayment) (string, error) { return "50001", nil })
		sent := f.settles.Load()
		if _, _, err := d.Report(ctx, "alice", "trace-0", false); !errors.Is(err, x402.ErrEscrowAmount) || f.settles.Load() != sent {
			t.Errorf("refund above the capture = %v, %d sent; want ErrEscrowAmount, none", err, f.settles.Load()-sent)
		}
	})
	t.Run("after the deadline", func(t *testing.T) {
		_, d, f, ps := disputeBed(t, 1, escrow.RefundWhole)
		d.Now = func() time.Time { return ps[0].RefundDeadline }
		sent := f.settles.Load()
		if _, _, err := d.Report(ctx, "alice", "trace-0", false); !errors.Is(err, escrow.ErrRefundExpired) || f.settles.Load() != sent {
			t.Errorf("refund after the deadline = %v, %d sent", err, f.settles.Load()-sent)
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		bed, d, _, ps := disputeBed(t, 1, escrow.RefundWhole)
		before := bed.Balances()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if _, _, err := d.Report(ctx, "alice", "trace-0", false); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		p, err := d.Ledger.Get(ctx, ps[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if p.Refunded != ps[0].Amount || len(p.Operations) != 2 || bed.Balances() != before.Plus(x402test.EscrowHoldAmount, 0, 0) {
			t.Errorf("after 8 disputes at once: refunded %s, %d operations, balances %+v", p.Refunded, len(p.Operations), bed.Balances())
		}
	})
}

// refusingFacilitator refuses the first n settles with reason, as a
// facilitator answers an operation it does not run, and relays the rest.
type refusingFacilitator struct {
	x402.Facilitator
	reason string
	n      atomic.Int32
}

func (f *refusingFacilitator) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if f.n.Add(-1) >= 0 {
		return &x402.SettleResponse{ErrorReason: f.reason, ErrorMessage: "refused", Network: r.Network}, nil
	}
	return f.Facilitator.Settle(ctx, p, r)
}

// A refund refused for a reason that may pass (the operator briefly
// without the funds, the facilitator's own failure) is not the dispute's
// outcome: Report says so with ErrEscrowRetryLater, records nothing, and
// the next report refunds.
func TestDisputes_transientRefusalIsRetried(t *testing.T) {
	for _, reason := range []string{evm.ReasonAuthCaptureRefundFunding, "unexpected_settle_error"} {
		bed, d, f, ps := disputeBed(t, 1, escrow.RefundWhole)
		d.Facilitator = &refusingFacilitator{Facilitator: f, reason: reason}
		d.Facilitator.(*refusingFacilitator).n.Store(1)
		before := bed.Balances()
		if o, refunded, err := d.Report(t.Context(), "alice", "trace-0", false); !errors.Is(err, x402.ErrEscrowRetryLater) || refunded {
			t.Errorf("%s: first report = %+v, %v, %v; want ErrEscrowRetryLater, nothing refunded", reason, o, refunded, err)
		}
		if p, _ := d.Ledger.Get(t.Context(), ps[0].ID); len(p.Operations) != 1 || p.State != x402.EscrowCaptured {
			t.Errorf("%s: the ledger kept %+v after a refusal that may pass", reason, p.Operations)
		}
		o, refunded, err := d.Report(t.Context(), "alice", "trace-0", false)
		if err != nil || !refunded || !o.Settlement.Success || bed.Balances() != before.Plus(x402test.EscrowHoldAmount, 0, 0) {
			t.Errorf("%s: second report = %+v, %v, %v, balances %+v; want the refund paid", reason, o, refunded, err, bed.Balances())
		}
	}
}

// A refund the facilitator refuses for good is reported as refused, not
// refunded, and replayed as such without asking again.
func TestDisputes_finalRefusalIsNotARefund(t *testing.T) {
	bed, d, f, _ := disputeBed(t, 1, escrow.RefundWhole)
	refusing := &refusingFacilitator{Facilitator: f, reason: evm.ReasonAuthCaptureRefundExpired}
	refusing.n.Store(1)
	d.Facilitator = refusing
	before, sent := bed.Balances(), f.settles.Load()
	for range 2 {
		o, refunded, err := d.Report(t.Context(), "alice", "trace-0", false)
		if err != nil || refunded || o.Settlement.Success || o.Settlement.ErrorReason != evm.ReasonAuthCaptureRefundExpired {
			t.Errorf("report = %+v, refunded %v, %v; want the refusal, not refunded", o, refunded, err)
		}
	}
	if refusing.n.Load() != 0 || f.settles.Load() != sent || bed.Balances() != before {
		t.Errorf("the refusal was asked %d times, %d relayed, balances %+v", 1-refusing.n.Load(), f.settles.Load()-sent, bed.Balances())
	}
}

// Callers are kept apart: another caller's many calls never evict a
// caller's call, which its caller can still dispute; only the caller's
// own later calls push it out.
func TestDisputes_callersApart(t *testing.T) {
	_, d, _, ps := disputeBed(t, 1, escrow.RefundWhole)
	d.MaxCalls = 3
	for i := range 10 {
		d.Paid("bob", "0xfree", fmt.Sprint("bob-", i))
	}
	if _, refunded, err := d.Report(t.Context(), "alice", "trace-0", true); err != nil || refunded {
		t.Errorf("alice's call after bob's ten: %v, %v; want it remembered", refunded, err)
	}
	for i := range 3 {
		d.Paid("alice", ps[0].ID, fmt.Sprint("later-", i))
	}
	if _, _, err := d.Report(t.Context(), "alice", "trace-0", true); !errors.Is(err, escrow.ErrUnknownCall) {
		t.Errorf("alice's first call after three of her own = %v, want ErrUnknownCall", err)
	}
	if _, _, err := d.Report(t.Context(), "bob", "bob-9", true); err != nil {
		t.Errorf("bob's latest call: %v", err)
	}
}
