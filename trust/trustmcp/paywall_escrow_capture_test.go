package trustmcp_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/x402test"
)

// A capture the facilitator did not answer is refused without the
// result; whether the capture then happens by the server's recovery or
// by the retry, the retry with the same payment gets the result the
// payment bought, with the capture: the payer never pays for a result it
// cannot have.
func TestPaywall_escrowCaptureUnanswered(t *testing.T) {
	for _, recovery := range []bool{true, false} {
		r := newEscrowRig(t)
		open := r.bed.Balances()
		p := r.pay(t, "square")
		r.fac.dropCapture.Store(true)
		res, err := paidCall(context.Background(), t, r.cs, "square", 3, p)
		if err != nil {
			t.Fatal(err)
		}
		if pr := paidTerms(t, res); pr.Settlement == nil || pr.Settlement.Success {
			t.Fatalf("recovery %v: first use %q, want the terms with the failed capture", recovery, text(res))
		}
		if recovery {
			rec := &escrow.Recovery{Ledger: r.ledger, Facilitator: r.bed.Facilitator, Authorizer: r.bed.Authorizer}
			if _, err := rec.Finish(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 {
			again, err := paidCall(context.Background(), t, r.cs, "square", 3, p)
			if err != nil {
				t.Fatal(err)
			}
			var out squareOut
			if again.IsError {
				t.Fatalf("recovery %v: the retry %q, want the result", recovery, text(again))
			}
			decode(t, again, &out)
			sr, e := reportOf(t, again)
			got := []any{out.Square, sr.Success, e.State, e.Captured}
			want := []any{9, true, x402.EscrowCaptured, "50000"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("recovery %v: the retry (-want +got):\n%s", recovery, diff)
			}
		}
		if got, want := r.bed.Balances(), open.Plus(-x402test.EscrowHoldAmount, 0, x402test.EscrowHoldAmount); got != want {
			t.Errorf("recovery %v: balances %+v, want %+v", recovery, got, want)
		}
		if n := r.runs.Load(); n != 1 {
			t.Errorf("recovery %v: the tool ran %d times", recovery, n)
		}
	}
}
