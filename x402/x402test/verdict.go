package x402test

import (
	"context"
	"sync"

	"github.com/vouchkit/vouch/x402"
)

// VerdictWaits is an escrow ledger whose first Decide waits: it closes
// Started, then records the verdict only once Release is closed, so that
// a test can act while a payment's first use is recording its verdict
// (retry the payment on another server, run a recovery). Make one with
// NewVerdictWaits.
type VerdictWaits struct {
	x402.EscrowLedger
	// Started is closed as the first Decide arrives.
	Started chan struct{}
	// Release lets the first Decide go on once the test closes it.
	Release chan struct{}

	once sync.Once
}

// NewVerdictWaits returns l whose first Decide waits.
func NewVerdictWaits(l x402.EscrowLedger) *VerdictWaits {
	return &VerdictWaits{EscrowLedger: l, Started: make(chan struct{}), Release: make(chan struct{})}
}

// Decide implements [x402.EscrowLedger]: the first call waits for
// Release before it records the verdict in the ledger it wraps, or
// returns ctx's cause, recording nothing, if ctx ends first.
func (l *VerdictWaits) Decide(ctx context.Context, id, verdict, capture string) (x402.EscrowPayment, error) {
	first := false
	l.once.Do(func() { first = true })
	if first {
		close(l.Started)
		select {
		case <-l.Release:
		case <-ctx.Done(): // a ledger reports a done context, recording nothing
			return x402.EscrowPayment{}, context.Cause(ctx)
		}
	}
	return l.EscrowLedger.Decide(ctx, id, verdict, capture)
}
