package trustmcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/x402test"
)

// twoServers returns two rigs of one seller (one bed) on one answer
// store, replay store and ledger, whose first verdict waits (ledger).
func twoServers(t *testing.T) (first, second *escrowRig, ledger *x402test.VerdictWaits) {
	t.Helper()
	bed := x402test.NewEscrowBed(t)
	answers, replay := &trustmcp.MemoryAnswers{}, &x402.MemoryReplay{}
	ledger = x402test.NewVerdictWaits(&x402.MemoryEscrowLedger{})
	shared := func(cfg *trustmcp.PaywallConfig) {
		cfg.Answers, cfg.Replay, cfg.Escrow.Ledger = answers, replay, ledger
	}
	return newEscrowRigOn(t, bed, shared), newEscrowRigOn(t, bed, shared), ledger
}

// The result a capture buys is kept before the verdict that captures it
// is recorded. A retry that reaches another server while the first use
// records its verdict is told to try again, touching nothing; once the
// first use captured, the retry there gets the result, the payer charged
// once and the tool run once.
func TestPaywall_escrowRetryBeforeTheVerdict(t *testing.T) {
	a, b, ledger := twoServers(t)
	open := a.bed.Balances()
	p := a.pay(t, "square")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := paidCall(context.Background(), t, a.cs, "square", 3, p); err != nil {
			t.Error(err)
		}
	}()
	<-ledger.Started
	early, err := paidCall(context.Background(), t, b.cs, "square", 3, p)
	if err != nil {
		t.Fatal(err)
	}
	close(ledger.Release)
	<-done
	again, err := paidCall(context.Background(), t, b.cs, "square", 3, p)
	if err != nil {
		t.Fatal(err)
	}
	var out squareOut
	if !again.IsError {
		decode(t, again, &out)
	}
	got := []any{early.IsError && strings.Contains(text(early), "has not recorded its verdict"), out.Square,
		a.runs.Load() + b.runs.Load(), a.bed.Balances()}
	want := []any{true, 9, int32(1), open.Plus(-x402test.EscrowHoldAmount, 0, x402test.EscrowHoldAmount)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("early retry told to try again, later retry's square, tool runs, balances (-want +got):\n%s\nearly: %q\nlater: %q", diff, text(early), text(again))
	}
}

// A payment whose first use stopped before it recorded its verdict is
// voided by the recovery; the retry of the payment, which finds the
// result kept before the verdict, is refused saying that nothing was
// bought, and the payer is charged nothing.
func TestPaywall_escrowVoidedBeforeTheVerdict(t *testing.T) {
	a, b, ledger := twoServers(t)
	open := a.bed.Balances()
	p := a.pay(t, "square")
	done := make(chan struct{})
	go func() {
		defer close(done)
		paidCall(context.Background(), t, a.cs, "square", 3, p)
	}()
	<-ledger.Started // the first use has stopped here, for the recovery
	rec := &escrow.Recovery{Ledger: ledger.EscrowLedger, Facilitator: a.bed.Facilitator, Authorizer: a.bed.Authorizer, Grace: time.Nanosecond}
	if fin, err := rec.Finish(t.Context()); err != nil || len(fin) != 1 || fin[0].Outcome.Operation != x402.EscrowVoid {
		t.Fatalf("recovery: %+v, %v; want the void", fin, err)
	}
	retry, err := paidCall(context.Background(), t, b.cs, "square", 3, p)
	if err != nil {
		t.Fatal(err)
	}
	close(ledger.Release)
	<-done
	got := []any{retry.IsError && strings.Contains(text(retry), "voided without a verdict"), a.bed.Balances()}
	want := []any{true, open}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("retry refused as voided, balances (-want +got):\n%s\nretry: %q", diff, text(retry))
	}
}
