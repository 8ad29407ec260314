package evm_test

import (
	"context"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
)

// A repeat of any operation gets the first outcome and moves nothing, a
// refusal included; Verify changes nothing.
func TestEscrowIdempotent(t *testing.T) {
	b := newEscrowBed(t, nil)
	b.escrow.Fund(acToken, b.terms.Operator, big.NewInt(1_000_000))
	if vr, _ := b.escrow.Verify(context.Background(), b.authorize, b.offer); !vr.IsValid {
		t.Fatalf("verify: %+v", vr)
	}
	if b.balance(b.payer.Address()) != 5_000_000 {
		t.Fatal("Verify moved the payer's balance")
	}
	var capture, stale *x402.PaymentPayload
	for _, op := range []struct {
		name string
		p    func() *x402.PaymentPayload
	}{
		{"authorize", func() *x402.PaymentPayload { return b.authorize }},
		{"capture", func() *x402.PaymentPayload {
			capture = b.capture(600_000, false)
			stale = b.capture(100_000, false) // signed against the same balances
			return capture
		}},
		{"stale capture, refused", func() *x402.PaymentPayload { return stale }},
		{"refund", func() *x402.PaymentPayload { return b.refund(200_000) }},
		{"void", b.void},
	} {
		p := op.p()
		first := b.settle(p)
		payer, c0, r0 := b.balance(b.payer.Address()), new(big.Int), new(big.Int)
		c0, r0 = b.state()
		again := b.settle(p)
		if !cmp.Equal(first, again) {
			t.Fatalf("%s: first %+v, repeat %+v", op.name, first, again)
		}
		c1, r1 := b.state()
		if b.balance(b.payer.Address()) != payer || c1.Cmp(c0) != 0 || r1.Cmp(r0) != 0 {
			t.Fatalf("%s: the repeat moved money", op.name)
		}
	}
	if c, r := b.state(); c.Sign() != 0 || r.Int64() != 400_000 {
		t.Fatalf("capturable %s, refundable %s; want 0 and 400000", c, r)
	}
}

// A repeat of an authorize after the authorization expired, or of a
// capture after the capture deadline, still gets the first outcome, not
// a refusal for the time.
func TestEscrowRepeatAfterExpiry(t *testing.T) {
	b := newEscrowBed(t, nil)
	first := b.settle(b.authorize)
	b.must(first)
	capture := b.capture(10_000, false)
	captured := b.settle(capture)
	b.must(captured)
	b.now = b.now.Add(time.Hour)
	if again := b.settle(b.authorize); !cmp.Equal(first, again) {
		t.Fatalf("the authorize repeated an hour later: %+v, want %+v", again, first)
	}
	if again := b.settle(capture); !cmp.Equal(captured, again) {
		t.Fatalf("the capture repeated after the capture deadline: %+v, want %+v", again, captured)
	}
}

// A full capture, a partial capture that voids the rest and a void of one
// payment raced, each sent many times: one wins, every copy of an operation gets
// the same outcome, and the money adds up.
func TestEscrowConcurrentLifecycle(t *testing.T) {
	for round := range 10 {
		b := newEscrowBed(t, nil)
		b.escrow.Fund(acToken, b.terms.Operator, big.NewInt(1_000_000))
		b.must(b.settle(b.authorize))
		// Each empties the hold: only one can run.
		ops := map[string]*x402.PaymentPayload{
			"capture":      b.capture(1_000_000, false),
			"partial+void": b.capture(250_000, true),
			"void":         b.void(),
		}
		const copies = 8
		results := make(map[string][]*x402.SettleResponse)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for name, p := range ops {
			for range copies {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sr, err := b.escrow.Settle(context.Background(), p, b.offer)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					results[name] = append(results[name], sr)
					mu.Unlock()
				}()
			}
		}
		wg.Wait()
		var winners []string
		for name, rs := range results {
			if len(rs) != copies {
				t.Fatalf("round %d: %s: %d results", round, name, len(rs))
			}
			for _, sr := range rs[1:] {
				if !cmp.Equal(sr, rs[0]) {
					t.Fatalf("round %d: %s: outcomes %+v and %+v", round, name, rs[0], sr)
				}
			}
			if rs[0].Success {
				winners = append(winners, name)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %v all succeeded, want one", round, winners)
		}
		c, r := b.state()
		want := map[string][2]int64{"capture": {0, 1_000_000}, "partial+void": {0, 250_000}, "void": {0, 0}}[winners[0]]
		if c.Int64() != want[0] || r.Int64() != want[1] {
			t.Fatalf("round %d: %s won, the escrow holds (%s, %s), want %v", round, winners[0], c, r, want)
		}
		if got := b.balance(b.payer.Address()) + b.balance(b.terms.Receiver) + b.balance(b.terms.Deployment.Escrow); got != 5_000_000 {
			t.Fatalf("round %d: payer, receiver and escrow hold %d, want 5000000", round, got)
		}
	}
}
