package escrow_test

import (
	"errors"
	"testing"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/x402test"
)

// A report on a call whose payment is still held, its capture decided
// and not finished (the facilitator did not answer it; a retry or a
// recovery sends it again), is told to come back, not that nothing was
// bought: once the capture lands, the next report refunds it. A held
// payment whose verdict voids it bought nothing.
func TestDisputes_reportDuringAPendingCapture(t *testing.T) {
	ctx := t.Context()
	bed := x402test.NewEscrowBed(t)
	l := &x402.MemoryEscrowLedger{}
	d := &escrow.Disputes{Ledger: l, Facilitator: bed.Facilitator, Authorizer: bed.Authorizer, Policy: escrow.RefundWhole}
	ps := holdN(t, bed, l, 2)
	if _, err := l.Decide(ctx, ps[0].ID, "VALID", ps[0].Amount); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Decide(ctx, ps[1].ID, "INVALID", "0"); err != nil {
		t.Fatal(err)
	}
	d.Paid("alice", ps[0].ID, "trace-0")
	d.Paid("alice", ps[1].ID, "trace-1")

	if _, refunded, err := d.Report(ctx, "alice", "trace-0", false); !errors.Is(err, escrow.ErrCapturePending) || refunded {
		t.Fatalf("report during the capture = %v, %v; want ErrCapturePending", refunded, err)
	}
	if _, refunded, err := d.Report(ctx, "alice", "trace-1", false); err != nil || refunded {
		t.Errorf("report on a payment decided void = %v, %v; want nothing refunded", refunded, err)
	}
	if o, _, err := x402.SettleEscrow(ctx, l, bed.Facilitator, bed.Authorizer, ps[0].ID, x402.EscrowCapture, x402.EscrowCapture, ps[0].Amount); err != nil || !o.Settlement.Success {
		t.Fatalf("capture: %+v, %v", o, err)
	}
	o, refunded, err := d.Report(ctx, "alice", "trace-0", false)
	if err != nil || !refunded || o.Amount != ps[0].Amount {
		t.Errorf("report after the capture = %+v, %v, %v; want the capture refunded", o, refunded, err)
	}
}
