package x402

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// The three steps below are the lifecycle's rules, which every
// [EscrowLedger] applies, so that a durable one (a database, a file) does
// exactly what [MemoryEscrowLedger] does: it reads the payment's record
// under its own lock (a mutex, a row lock, a write transaction), takes
// the step, and writes the record back under the same lock.

// Held returns p as an [EscrowLedger] records it on its first Hold: in
// state Held, with no verdict and nothing captured, refunded or operated.
// It fails for a payment without an id, and with [ErrEscrowAmount] for a
// hold that is not a decimal amount.
func (p EscrowPayment) Held() (EscrowPayment, error) {
	if p.ID == "" {
		return EscrowPayment{}, errors.New("x402: escrow payment without an id")
	}
	if _, err := escrowAmount(p.Amount); err != nil {
		return EscrowPayment{}, fmt.Errorf("%w: hold %q", ErrEscrowAmount, p.Amount)
	}
	p.State, p.Verdict, p.Capture, p.Captured, p.Refunded, p.Operations = EscrowHeld, "", "", "0", "0", nil
	p.Payload = slices.Clone(p.Payload)
	p.Offer.Extra = maps.Clone(p.Offer.Extra)
	return p, nil
}

// Decided returns p with its verdict and the amount to capture recorded,
// as [EscrowLedger.Decide] records them, and whether that changed p: a
// payment decided already keeps its first decision. It fails with
// [ErrEscrowAmount] when capture is not a decimal or is above the hold,
// and with [ErrEscrowState] when p, undecided, is no longer Held (a
// recovery voided it without a verdict): no verdict can move it now.
func (p EscrowPayment) Decided(verdict, capture string) (EscrowPayment, bool, error) {
	amount, err := escrowAmount(capture)
	if err != nil {
		return p, false, fmt.Errorf("%w: capture %q", ErrEscrowAmount, capture)
	}
	if p.Verdict != "" || p.Capture != "" {
		return p, false, nil
	}
	if p.State != EscrowHeld {
		return p, false, fmt.Errorf("%w: verdict on a payment %s", ErrEscrowState, p.State)
	}
	if hold, _ := escrowAmount(p.Amount); amount.Cmp(hold) > 0 {
		return p, false, fmt.Errorf("%w: capture %s of a hold of %s", ErrEscrowAmount, capture, p.Amount)
	}
	p.Verdict, p.Capture = verdict, amount.String()
	return p, true, nil
}

// Recorded returns p with the outcome o recorded, as
// [EscrowLedger.Record] records it, the operation's first outcome, and
// whether o is that first outcome (then p changed). An outcome recorded
// under o.Key already is returned with p unchanged; otherwise o moves p
// by the lifecycle's rules (see [EscrowLedger.Record]), or the error
// ([ErrEscrowState], [ErrEscrowAmount]) says why it may not. A zero o.At
// is set to now.
func (p EscrowPayment) Recorded(o EscrowOutcome, now time.Time) (EscrowPayment, EscrowOutcome, bool, error) {
	if o.Key == "" {
		return p, EscrowOutcome{}, false, errors.New("x402: escrow outcome without a key")
	}
	if first, ok := p.Outcome(o.Key); ok {
		return p, first, false, nil
	}
	next, err := p.apply(o)
	if err != nil {
		return p, EscrowOutcome{}, false, err
	}
	if o.At.IsZero() {
		o.At = now
	}
	o.Settlement.Extensions = maps.Clone(o.Settlement.Extensions)
	next.Operations = append(slices.Clone(p.Operations), o)
	return next, o, true, nil
}
