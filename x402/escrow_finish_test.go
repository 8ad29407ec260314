package x402_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/x402test"
)

// countingFacilitator counts the settles it relays.
type countingFacilitator struct {
	x402.Facilitator
	settles atomic.Int64
}

func (c *countingFacilitator) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	c.settles.Add(1)
	return c.Facilitator.Settle(ctx, p, r)
}

// Captures, voids and refunds of one payment sent at once through
// SettleEscrow: one capture or one void wins, every other call of the
// same operation replays its outcome and the other operation is refused
// (by the ledger, or by the escrow); the escrow moves once. Then refunds raced likewise:
// one refund, never above the capture.
func TestSettleEscrow_concurrentOperationsOnOnePayment(t *testing.T) {
	ctx := t.Context()
	bed := x402test.NewEscrowBed(t)
	l := &x402.MemoryEscrowLedger{}
	p, err := x402test.HoldEscrow(ctx, bed.Facilitator, bed.Offer, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Hold(ctx, p); err != nil {
		t.Fatal(err)
	}
	before := bed.Balances()
	type result struct {
		op    string
		o     x402.EscrowOutcome
		fresh bool
		err   error
	}
	race := func(ops ...[2]string) []result {
		var (
			wg  sync.WaitGroup
			mu  sync.Mutex
			out []result
		)
		for range 8 {
			for _, op := range ops {
				wg.Go(func() {
					o, fresh, err := x402.SettleEscrow(ctx, l, bed.Facilitator, bed.Authorizer, p.ID, op[0], op[0], op[1])
					mu.Lock()
					out = append(out, result{op[0], o, fresh, err})
					mu.Unlock()
				})
			}
		}
		wg.Wait()
		return out
	}
	check := func(rs []result) (winner string) {
		t.Helper()
		fresh := 0
		firsts := map[string]string{}
		for _, r := range rs {
			switch {
			case errors.Is(r.err, x402.ErrEscrowState):
			case r.err != nil:
				t.Fatalf("%s: %v", r.op, r.err)
			case !r.o.Settlement.Success:
				// The loser's refusal by the escrow, recorded before the
				// winner's outcome: it moved nothing.
			default:
				if tx, ok := firsts[r.op]; ok && tx != r.o.Settlement.Transaction {
					t.Errorf("%s: outcomes %s and %s, want one replayed", r.op, tx, r.o.Settlement.Transaction)
				}
				firsts[r.op] = r.o.Settlement.Transaction
				winner = r.op
				if r.fresh {
					fresh++
				}
			}
		}
		if len(firsts) != 1 || fresh != 1 {
			t.Fatalf("%d operations succeeded, %d recorded fresh; want one, once", len(firsts), fresh)
		}
		return winner
	}
	const hold = x402test.EscrowHoldAmount
	switch check(race([2]string{x402.EscrowCapture, "50000"}, [2]string{x402.EscrowVoid, ""})) {
	case x402.EscrowVoid:
		if got := bed.Balances(); got != before.Plus(hold, -hold, 0) {
			t.Fatalf("after the void: %+v, want the hold back with the payer", got)
		}
		return // nothing to refund
	case x402.EscrowCapture:
		if got := bed.Balances(); got != before.Plus(0, -hold, hold) {
			t.Fatalf("after the capture: %+v", got)
		}
	}
	check(race([2]string{x402.EscrowRefund, "50000"}))
	if got := bed.Balances(); got != before.Plus(hold, -hold, hold) {
		// The refund is drawn from the operator, as the operator refund
		// collector draws it; the receiver keeps the capture.
		t.Fatalf("after the refund: %+v", got)
	}
	if _, _, err := x402.SettleEscrow(ctx, l, bed.Facilitator, bed.Authorizer, p.ID, "refund-2", x402.EscrowRefund, "1"); !errors.Is(err, x402.ErrEscrowAmount) {
		t.Errorf("a refund above what was captured = %v, want ErrEscrowAmount", err)
	}
}
