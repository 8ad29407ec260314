package trustmcp_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/x402test"
)

// stopAtCapture is a facilitator that, once armed, stops the server's
// stores (stopped) as it takes the capture: whatever the server keeps
// after the capture is sent is lost, as when it stops at that moment.
type stopAtCapture struct {
	x402.Facilitator
	armed, stopped *atomic.Bool
}

func (f *stopAtCapture) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if strings.Contains(string(p.Payload), `"type":"capture"`) && f.armed.CompareAndSwap(true, false) {
		f.stopped.Store(true)
	}
	return f.Facilitator.Settle(ctx, p, r)
}

// stoppingAnswers and stoppingReplay drop what they are given to keep
// while stopped is set.
type stoppingAnswers struct {
	trustmcp.AnswerStore
	stopped *atomic.Bool
}

func (s stoppingAnswers) Keep(ctx context.Context, key, payer string, answer []byte, until time.Time) error {
	if s.stopped.Load() {
		return nil
	}
	return s.AnswerStore.Keep(ctx, key, payer, answer, until)
}

type stoppingReplay struct {
	x402.ReplayStore
	stopped *atomic.Bool
}

func (s stoppingReplay) MarkSettled(ctx context.Context, key string, sp x402.SettledPayment) error {
	if s.stopped.Load() {
		return nil
	}
	return s.ReplayStore.MarkSettled(ctx, key, sp)
}

func (s stoppingReplay) Release(ctx context.Context, key string, until time.Time) error {
	if s.stopped.Load() {
		return nil
	}
	return s.ReplayStore.Release(ctx, key, until)
}

// A server that stops as it sends a capture has kept the result the
// capture buys before sending it: the retry of the payment, on the
// server started again over the same stores (in memory here, in a
// database in production), gets the result with the capture, the tool
// run once and the payer charged once.
func TestPaywall_escrowResultKeptBeforeCapture(t *testing.T) {
	var armed, stopped atomic.Bool
	r := newEscrowRigWith(t, func(cfg *trustmcp.PaywallConfig) {
		cfg.Facilitator = &stopAtCapture{Facilitator: cfg.Facilitator, armed: &armed, stopped: &stopped}
		cfg.Answers = stoppingAnswers{&trustmcp.MemoryAnswers{}, &stopped}
		cfg.Replay = stoppingReplay{&x402.MemoryReplay{}, &stopped}
	})
	open := r.bed.Balances()
	p := r.pay(t, "square")
	armed.Store(true)
	if _, err := paidCall(context.Background(), t, r.cs, "square", 3, p); err != nil {
		t.Fatal(err)
	}
	if !stopped.Load() {
		t.Fatal("the first use sent no capture")
	}
	stopped.Store(false) // started again
	again, err := paidCall(context.Background(), t, r.cs, "square", 3, p)
	if err != nil {
		t.Fatal(err)
	}
	if again.IsError {
		t.Fatalf("the retry %q, want the result", text(again))
	}
	var out squareOut
	decode(t, again, &out)
	sr, e := reportOf(t, again)
	got := []any{out.Square, sr.Success, e.State, r.runs.Load(), r.bed.Balances()}
	want := []any{9, true, x402.EscrowCaptured, int32(1), open.Plus(-x402test.EscrowHoldAmount, 0, x402test.EscrowHoldAmount)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the retry: square, success, state, tool runs, balances (-want +got):\n%s", diff)
	}
}
