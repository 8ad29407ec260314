package x402test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
)

// claim checks a ledger that is an escrow.Claimer: a held payment is
// claimed by one caller at a time, and again once the claim lapses (at
// its until, as a claim that lasts beyond now is one held); a finished
// payment and an unknown id are claimed by none, without an error; of
// concurrent claims exactly one wins; a done context is reported before
// any work.
func claim(t *testing.T, l x402.EscrowLedger, c escrow.Claimer) {
	ctx := context.Background()
	p := Payment(1, "10")
	mustHold(t, l, p)
	now := p.HeldAt
	for _, step := range []struct {
		what string
		at   time.Time
		want bool
	}{
		{"first claim", now, true},
		{"while it lasts", now.Add(time.Second), false},
		{"just before it lapses", now.Add(time.Minute - time.Millisecond), false},
		{"once it lapsed", now.Add(time.Minute), true},
	} {
		if got, err := c.Claim(ctx, p.ID, step.at, step.at.Add(time.Minute)); err != nil || got != step.want {
			t.Errorf("Claim, %s = %v, %v; want %v", step.what, got, err, step.want)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Claim(cancelled, p.ID, now.Add(time.Hour), now.Add(2*time.Hour)); !errors.Is(err, context.Canceled) {
		t.Errorf("Claim on a done context = %v, want context.Canceled", err)
	}
	if got, err := c.Claim(ctx, p.ID, now.Add(time.Hour), now.Add(2*time.Hour)); err != nil || !got {
		t.Errorf("Claim after a claim on a done context = %v, %v; want true: the cancelled claim took nothing", got, err)
	}
	if _, _, _, err := l.Record(ctx, p.ID, outcome(x402.EscrowVoid, "")); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Claim(ctx, p.ID, now.Add(3*time.Hour), now.Add(4*time.Hour)); err != nil || got {
		t.Errorf("Claim of a voided payment = %v, %v; want false, nil", got, err)
	}
	if got, err := c.Claim(ctx, Payment(2, "10").ID, now, now.Add(time.Minute)); err != nil || got {
		t.Errorf("Claim of an unknown payment = %v, %v; want false, nil", got, err)
	}

	q := Payment(3, "10")
	mustHold(t, l, q)
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := c.Claim(ctx, q.ID, now, now.Add(time.Minute))
			if err != nil {
				t.Error(err)
			}
			if got {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Errorf("%d of 8 concurrent claims won, want 1", won.Load())
	}
}
