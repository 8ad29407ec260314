package escrow_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/x402test"
)

// A report on a call whose capture the facilitator refused for good
// (recorded, so neither a retry nor a recovery sends it again) is told
// that nothing was bought, not to come back: the payment is not pending,
// and no report will ever refund it.
func TestDisputes_reportAfterARefusedCapture(t *testing.T) {
	ctx := t.Context()
	bed := x402test.NewEscrowBed(t)
	l := &x402.MemoryEscrowLedger{}
	d := &escrow.Disputes{Ledger: l, Facilitator: bed.Facilitator, Authorizer: bed.Authorizer, Policy: escrow.RefundWhole}
	ps := holdN(t, bed, l, 1)
	if _, err := l.Decide(ctx, ps[0].ID, "VALID", ps[0].Amount); err != nil {
		t.Fatal(err)
	}
	refusal := x402.EscrowOutcome{Key: x402.EscrowCapture, Operation: x402.EscrowCapture, Amount: ps[0].Amount,
		Settlement: x402.SettleResponse{ErrorReason: "invalid_auth_capture_expired"}}
	if _, _, _, err := l.Record(ctx, ps[0].ID, refusal); err != nil {
		t.Fatal(err)
	}
	d.Paid("alice", ps[0].ID, "trace-0")
	type report struct {
		Outcome  x402.EscrowOutcome
		Refunded bool
		Err      error
	}
	o, refunded, err := d.Report(ctx, "alice", "trace-0", false)
	if diff := cmp.Diff(report{}, report{o, refunded, err}, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("report after a refused capture (-want +got):\n%s", diff)
	}
}
