package escrow_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
)

// A policy that refunds nothing, however it writes zero, sends nothing
// and reports no refund: the payment stays captured.
func TestDisputes_zeroRefundWrittenWithZeros(t *testing.T) {
	for _, zero := range []string{"0", "00", "000000"} {
		policy := func(context.Context, x402.EscrowPayment) (string, error) { return zero, nil }
		_, d, f, ps := disputeBed(t, 1, policy)
		sent := f.settles.Load()
		o, refunded, err := d.Report(t.Context(), "alice", "trace-0", false)
		if err != nil {
			t.Fatalf("%q: Report: %v", zero, err)
		}
		p, err := d.Ledger.Get(t.Context(), ps[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		got := []any{o, refunded, f.settles.Load() - sent, p.State, p.Refunded}
		want := []any{x402.EscrowOutcome{}, false, int64(0), x402.EscrowCaptured, "0"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("policy refunding %q (-want +got):\n%s", zero, diff)
		}
	}
}
