package x402test

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/vouchkit/vouch/x402"
)

// VerdictOutage is an escrow ledger and a facilitator that go down
// together as the first verdict is recorded, as when one outage takes
// both: Decide reports an error, having recorded the verdict first when
// Recorded is set (a commit whose acknowledgement was lost); from then
// until End, Get reports an error and Settle answers nothing. Make one
// with NewVerdictOutage, and serve with it as both ledger and
// facilitator.
type VerdictOutage struct {
	x402.EscrowLedger
	x402.Facilitator
	// Recorded reports whether Decide records the verdict in the
	// ledger before it reports the error.
	Recorded bool

	down, begun atomic.Bool
}

// NewVerdictOutage returns the ledger l and the facilitator f, which go
// down at the first verdict.
func NewVerdictOutage(l x402.EscrowLedger, f x402.Facilitator, recorded bool) *VerdictOutage {
	return &VerdictOutage{EscrowLedger: l, Facilitator: f, Recorded: recorded}
}

// End ends the outage.
func (o *VerdictOutage) End() { o.down.Store(false) }

// Decide implements [x402.EscrowLedger]: the first call begins the
// outage, records the verdict when Recorded is set, and reports an
// error; a later one reports an error until End, and then records.
func (o *VerdictOutage) Decide(ctx context.Context, id, verdict, capture string) (x402.EscrowPayment, error) {
	if o.begun.Swap(true) { // the outage was at the first verdict
		if o.down.Load() {
			return x402.EscrowPayment{}, errors.New("x402test: the ledger is unreachable")
		}
		return o.EscrowLedger.Decide(ctx, id, verdict, capture)
	}
	o.down.Store(true)
	if o.Recorded {
		if _, err := o.EscrowLedger.Decide(ctx, id, verdict, capture); err != nil {
			return x402.EscrowPayment{}, err
		}
	}
	return x402.EscrowPayment{}, errors.New("x402test: connection lost at commit")
}

// Get implements [x402.EscrowLedger]: during the outage it reports an
// error.
func (o *VerdictOutage) Get(ctx context.Context, id string) (x402.EscrowPayment, error) {
	if o.down.Load() {
		return x402.EscrowPayment{}, errors.New("x402test: the ledger is unreachable")
	}
	return o.EscrowLedger.Get(ctx, id)
}

// Settle implements [x402.Facilitator]: during the outage it answers
// nothing.
func (o *VerdictOutage) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if o.down.Load() {
		return nil, errors.New("x402test: the facilitator is unreachable")
	}
	return o.Facilitator.Settle(ctx, p, r)
}
