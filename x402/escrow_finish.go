package x402

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// SettleEscrow runs one lifecycle operation of the payment id at most
// once: when the ledger records an outcome under key already, it returns
// that outcome and sends nothing; otherwise it has signer make the
// operation's payload, sends it to the facilitator and records the
// facilitator's answer under key, returning the outcome the ledger keeps
// (the first recorded, should another server have recorded one
// meanwhile). fresh reports whether this call recorded it.
//
// The facilitator's answer, success or final refusal, is recorded; an
// error of the facilitator (unreachable, say), or a refusal for a reason
// that may pass ([TransientRefusal]: the error wraps
// [ErrEscrowRetryLater]), is returned with nothing recorded, and the
// operation may be run again with the same key: the
// facilitator's lifecycle is idempotent per operation (the scheme's
// security note 5), so an operation sent twice, as two servers racing
// may send it, moves the escrow once and answers both alike.
func SettleEscrow(ctx context.Context, l EscrowLedger, f Facilitator, a EscrowAuthorizer, id, key, op, amount string) (o EscrowOutcome, fresh bool, err error) {
	p, err := l.Get(ctx, id)
	if err != nil {
		return EscrowOutcome{}, false, err
	}
	_, o, fresh, err = settleEscrow(ctx, l, f, a, p, key, op, amount)
	return o, fresh, err
}

// settleEscrow is [SettleEscrow] of p, the payment as the caller read it
// from l, and also returns the payment as l keeps it after the outcome.
// [Middleware] runs its captures and voids through it.
func settleEscrow(ctx context.Context, l EscrowLedger, f Facilitator, a EscrowAuthorizer, p EscrowPayment, key, op, amount string) (EscrowPayment, EscrowOutcome, bool, error) {
	if first, ok := p.Outcome(key); ok {
		return p, first, false, nil
	}
	// Refuse what the ledger would refuse before anything is sent.
	if _, _, _, err := p.Recorded(EscrowOutcome{Key: key, Operation: op, Amount: amount, Settlement: SettleResponse{Success: true}}, time.Time{}); err != nil {
		return p, EscrowOutcome{}, false, err
	}
	payload, err := a.Consent(p, op, amount)
	if err != nil {
		return p, EscrowOutcome{}, false, fmt.Errorf("x402: consenting to the %s of escrow payment %s: %w", op, p.ID, err)
	}
	sr, err := f.Settle(ctx, payload, p.Offer)
	if err != nil {
		return p, EscrowOutcome{}, false, fmt.Errorf("x402: settling the %s of escrow payment %s: %w", op, p.ID, err)
	}
	if sr == nil {
		return p, EscrowOutcome{}, false, fmt.Errorf("x402: settling the %s of escrow payment %s: the facilitator answered nothing", op, p.ID)
	}
	if !sr.Success && TransientRefusal(a, sr.ErrorReason) {
		return p, EscrowOutcome{}, false, fmt.Errorf("%w: the %s of escrow payment %s: %s", ErrEscrowRetryLater, op, p.ID, joinReason(sr.ErrorReason, sr.ErrorMessage))
	}
	return l.Record(ctx, p.ID, EscrowOutcome{Key: key, Operation: op, Amount: amount, Settlement: *sr})
}

// ErrEscrowRetryLater: the facilitator refused a lifecycle operation for
// a reason that may pass (see [TransientRefusal]); nothing was recorded,
// and the operation may be sent again.
var ErrEscrowRetryLater = errors.New("x402: the facilitator refused the escrow operation for now")

// An EscrowTransient is an [EscrowAuthorizer] that knows which of its
// network's refusals of a lifecycle operation may pass, such as the
// operator briefly without the funds a refund draws on
// (evm.ReceiverAuthorizer is one).
type EscrowTransient interface {
	Transient(reason string) bool
}

// TransientRefusal reports whether a facilitator's refusal of a
// lifecycle operation for reason may pass, so that the operation is not
// finished but to be sent again: the protocol's "unexpected_settle_error"
// (the facilitator's own failure) and "insufficient_funds" (for a
// lifecycle operation, the operator's or escrow's funds, which may come),
// and the reasons a, when it is an [EscrowTransient], names. Any other
// refusal is final.
func TransientRefusal(a EscrowAuthorizer, reason string) bool {
	switch reason {
	case "unexpected_settle_error", "insufficient_funds":
		return true
	}
	t, ok := a.(EscrowTransient)
	return ok && t.Transient(reason)
}

// boundedSettle settles on a context detached from the caller's and
// bounded by timeout, so that a client gone does not cancel a lifecycle
// operation half way.
type boundedSettle struct {
	Facilitator
	timeout time.Duration
}

func (b boundedSettle) Settle(ctx context.Context, p *PaymentPayload, r PaymentRequirements) (*SettleResponse, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.timeout)
	defer cancel()
	return b.Facilitator.Settle(ctx, p, r)
}

// withEscrow adds the report to the settlement's extensions.
func withEscrow(sr *SettleResponse, e EscrowReport) {
	info, err := json.Marshal(map[string]EscrowReport{"info": e})
	if err != nil {
		return
	}
	ext := make(map[string]json.RawMessage, len(sr.Extensions)+1)
	for k, v := range sr.Extensions {
		ext[k] = v
	}
	ext[ExtensionEscrow] = info
	sr.Extensions = ext
}
