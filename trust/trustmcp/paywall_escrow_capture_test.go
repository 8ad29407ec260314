package trustmcp_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trustmcp"
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
		retriesBuy(t, r, p, open, fmt.Sprintf("recovery %v", recovery))
	}
}

// retriesBuy checks that two retries of p, a payment for the square of 3,
// each get the result with the capture of the hold, taken from open once,
// and that the tool ran once.
func retriesBuy(t *testing.T, r *escrowRig, p x402.PaymentPayload, open x402test.EscrowBalances, name string) {
	t.Helper()
	for range 2 {
		again, err := paidCall(context.Background(), t, r.cs, "square", 3, p)
		if err != nil {
			t.Fatal(err)
		}
		if again.IsError {
			t.Fatalf("%s: the retry %q, want the result", name, text(again))
		}
		var out squareOut
		decode(t, again, &out)
		sr, e := reportOf(t, again)
		got := []any{out.Square, sr.Success, e.State, e.Captured}
		want := []any{9, true, x402.EscrowCaptured, "50000"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the retry (-want +got):\n%s", name, diff)
		}
	}
	if got, want := r.bed.Balances(), open.Plus(-x402test.EscrowHoldAmount, 0, x402test.EscrowHoldAmount); got != want {
		t.Errorf("%s: balances %+v, want %+v", name, got, want)
	}
	if n := r.runs.Load(); n != 1 {
		t.Errorf("%s: the tool ran %d times", name, n)
	}
}

// The result of a capture the facilitator did not answer is kept while
// the payer's later results fill the answer store: it is the only copy
// of what the capture the recovery sends buys, so no result pushes it
// out.
func TestPaywall_escrowCapturePendingKept(t *testing.T) {
	r := newEscrowRigWith(t, func(cfg *trustmcp.PaywallConfig) { cfg.Answers = &trustmcp.MemoryAnswers{MaxEntries: 1} })
	open := r.bed.Balances()
	pending := r.pay(t, "square")
	r.fac.dropCapture.Store(true)
	if res, err := paidCall(context.Background(), t, r.cs, "square", 3, pending); err != nil || !res.IsError {
		t.Fatalf("first use: %v %q, want the terms with the failed capture", err, text(res))
	}
	later, err := paidCall(context.Background(), t, r.cs, "square", 3, r.pay(t, "square"))
	if err != nil || later.IsError {
		t.Fatalf("the payer's next call: %v %q, want the result", err, text(later))
	}

	rec := &escrow.Recovery{Ledger: r.ledger, Facilitator: r.bed.Facilitator, Authorizer: r.bed.Authorizer}
	if _, err := rec.Finish(t.Context()); err != nil {
		t.Fatal(err)
	}
	again, err := paidCall(context.Background(), t, r.cs, "square", 3, pending)
	if err != nil {
		t.Fatal(err)
	}
	if again.IsError {
		t.Fatalf("the retry of the pending capture %q, want the result", text(again))
	}
	var out squareOut
	decode(t, again, &out)
	sr, e := reportOf(t, again)
	got := []any{out.Square, sr.Success, e.State}
	want := []any{9, true, x402.EscrowCaptured}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the retry (-want +got):\n%s", diff)
	}
	if got, want := r.bed.Balances(), open.Plus(-2*x402test.EscrowHoldAmount, 0, 2*x402test.EscrowHoldAmount); got != want {
		t.Errorf("balances %+v, want %+v", got, want)
	}
}

// The result of a capture left unanswered is kept, with its payment,
// until the capture deadline, however short the authorization's own
// validity: the recovery may capture it until then, and the retry of
// the payment gets the result it bought.
func TestPaywall_escrowCapturePendingUntilDeadline(t *testing.T) {
	var clock atomic.Int64 // what the paywall's clock is ahead of the real one
	now := func() time.Time { return time.Now().Add(time.Duration(clock.Load())) }
	r := newEscrowRigWith(t, func(cfg *trustmcp.PaywallConfig) { cfg.Now = now })
	open := r.bed.Balances()
	p := r.pay(t, "square")
	r.fac.dropCapture.Store(true)
	if res, err := paidCall(context.Background(), t, r.cs, "square", 3, p); err != nil || !res.IsError {
		t.Fatalf("first use: %v %q, want the terms with the failed capture", err, text(res))
	}

	// Two minutes on: the authorization (valid 60 s) has expired, the
	// capture deadline (ten minutes) has not.
	clock.Store(int64(2 * time.Minute))
	rec := &escrow.Recovery{Ledger: r.ledger, Facilitator: r.bed.Facilitator, Authorizer: r.bed.Authorizer, Now: now}
	if done, err := rec.Finish(t.Context()); err != nil || len(done) != 1 || done[0].Outcome.Operation != x402.EscrowCapture {
		t.Fatalf("recovery: %+v, %v; want the capture", done, err)
	}
	again, err := paidCall(context.Background(), t, r.cs, "square", 3, p)
	if err != nil {
		t.Fatal(err)
	}
	if again.IsError {
		t.Fatalf("the retry after the recovery captured %q, want the result", text(again))
	}
	var out squareOut
	decode(t, again, &out)
	if _, e := reportOf(t, again); out.Square != 9 || e.State != x402.EscrowCaptured {
		t.Errorf("the retry: square %d, report %+v; want 9, captured", out.Square, e)
	}
	if got, want := r.bed.Balances(), open.Plus(-x402test.EscrowHoldAmount, 0, x402test.EscrowHoldAmount); got != want {
		t.Errorf("balances %+v, want %+v", got, want)
	}
}
