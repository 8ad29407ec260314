package x402

import (
	"cmp"
	"context"
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

// Escrow recovery's defaults.
const (
	// DefaultEscrowGrace is how long after its hold a payment without a
	// verdict is left to the server running its work, when
	// [EscrowRecovery].Grace is zero: twice a route's default time budget
	// and two default settlements (the hold's and the capture's).
	DefaultEscrowGrace = 2 * time.Minute
	// DefaultEscrowClaim is how long a recovery's claim on a payment
	// lasts, when [EscrowRecovery].Claim is zero.
	DefaultEscrowClaim = time.Minute
)

// An EscrowClaimer is an [EscrowLedger] shared by several servers that
// lets one of them at a time finish a payment, so that servers recovering
// at once do not each send its operation: Claim gives the caller the
// payment id until the time until, and reports whether it did; it does
// when the payment is Held and no claim on it lasts beyond now. A claim
// that lapses (its server died) may be taken again. The durable ledgers
// of packages x402/boltstore and pgstore are EscrowClaimers.
type EscrowClaimer interface {
	Claim(ctx context.Context, id string, now, until time.Time) (bool, error)
}

// EscrowRecovery finishes the escrowed payments that a server held and
// did not finish: a server that died between a hold and its verdict, or
// between the verdict and its capture or void, leaves the payment Held
// in the ledger, and the payer's funds locked until the capture deadline.
// A server runs [EscrowRecovery.Finish] when it starts, before it serves
// (and may run it every few minutes after), so that such payments are
// finished well before their capture deadline.
//
// Each Held payment is finished by its recorded verdict: captured by the
// amount [EscrowLedger.Decide] recorded, or voided when that amount is
// "0", when there is no verdict at all, or when the facilitator refused
// its capture. The capture is keyed "capture" and
// the void "void", as the route keys them, so an operation the route
// already sent is replayed, not sent again ([SettleEscrow]): Finish run
// twice, or on two servers at once, runs each operation once.
//
// When the ledger is an [EscrowClaimer], each payment is claimed before
// its operation is sent, and a payment another server claimed is left
// to it: N servers recovering at once send each operation once. Without
// a claim two servers may both send it, and the facilitator's
// idempotency answers the second with the first's outcome.
//
// A payment without a verdict may still be running on a live server; it
// is voided only once it was held longer than Grace ago, which must
// exceed the longest work the route runs behind a hold. A payment whose
// capture deadline has passed is left to its payer, who reclaims it.
type EscrowRecovery struct {
	// Ledger is the ledger of the payments; required.
	Ledger EscrowLedger
	// Facilitator settles the operations; required.
	Facilitator Facilitator
	// Authorizer consents to them; required.
	Authorizer EscrowAuthorizer
	// Grace is how long after its hold a payment without a verdict is
	// left alone; zero means DefaultEscrowGrace.
	Grace time.Duration
	// Claim is how long a claim on a payment lasts (see
	// [EscrowClaimer]); each operation Finish sends is abandoned,
	// unrecorded, after half of it, so that the claim outlasts the
	// operation. Zero means DefaultEscrowClaim.
	Claim time.Duration
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// EscrowFinished is what [EscrowRecovery.Finish] did to one payment.
type EscrowFinished struct {
	// ID is the payment.
	ID string
	// Outcome is the outcome of the capture or void that finished it,
	// as the ledger keeps it.
	Outcome EscrowOutcome
	// Sent reports whether this Finish sent it (false when it replayed
	// an outcome recorded before).
	Sent bool
}

// Finish finishes every Held payment it may (see [EscrowRecovery]) and
// reports what it did, in the order of their holds. It goes on past a
// payment it cannot finish (its facilitator unreachable, say) and
// returns those errors joined; the payment stays Held for the next run.
func (r *EscrowRecovery) Finish(ctx context.Context) ([]EscrowFinished, error) {
	if r.Ledger == nil || r.Facilitator == nil || r.Authorizer == nil {
		return nil, errors.New("x402: EscrowRecovery needs a Ledger, a Facilitator and an Authorizer")
	}
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	grace := r.Grace
	if grace <= 0 {
		grace = DefaultEscrowGrace
	}
	// Each operation is abandoned, unrecorded, after half the claim, so
	// that the claim never lapses while it is in flight: a facilitator
	// that hangs does not let another server send the same operation.
	claim := cmp.Or(r.Claim, DefaultEscrowClaim)
	settle := boundedSettle{r.Facilitator, claim / 2}
	held, err := r.Ledger.Unfinished(ctx, 0)
	if err != nil {
		return nil, err
	}
	var (
		done []EscrowFinished
		errs []error
	)
	for _, p := range held {
		if !now.Before(p.CaptureDeadline) {
			continue // the payer's to reclaim
		}
		op, key, amount := EscrowVoid, EscrowVoid, ""
		refused, _ := p.Outcome(EscrowCapture) // a capture the facilitator refused is voided
		switch {
		case p.Capture != "" && p.Capture != "0" && refused.Key == "":
			op, key, amount = EscrowCapture, EscrowCapture, p.Capture
		case p.Capture == "" && now.Sub(p.HeldAt) < grace:
			continue // its work may still be running
		}
		if c, ok := r.Ledger.(EscrowClaimer); ok {
			mine, err := c.Claim(ctx, p.ID, now, now.Add(claim))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !mine {
				continue // another server finishes it
			}
		}
		o, sent, err := SettleEscrow(ctx, r.Ledger, settle, r.Authorizer, p.ID, key, op, amount)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, EscrowFinished{ID: p.ID, Outcome: o, Sent: sent})
	}
	return done, errors.Join(errs...)
}

// NewEscrowRecovery returns the recovery of the "auth-capture" routes cfg
// configures for [Middleware]: its ledger, facilitator and authorizer,
// and a Grace of the longest route's time budget plus two settlements
// (the hold and the capture), doubled, or DefaultEscrowGrace if longer.
// With a PriceFunc, whose prices' time budgets are known per request
// only, the Grace is at least the capture window, the longest such a
// price may run behind a hold (a hold without a verdict is then left to
// its payer, who reclaims it after its capture deadline); a host that
// knows its longest budget may set a shorter Grace.
// A server runs its Finish before it serves:
//
//	r, err := x402.NewEscrowRecovery(cfg)
//	if err != nil { ... }
//	if _, err := r.Finish(ctx); err != nil { ... } // logged; the rest retried next time
//	mw, err := x402.Middleware(cfg)
//
// It fails when cfg has no Escrow, or no Ledger (a new memory ledger
// holds nothing to recover).
func NewEscrowRecovery(cfg MiddlewareConfig) (*EscrowRecovery, error) {
	if cfg.Escrow == nil || cfg.Escrow.Ledger == nil || cfg.Escrow.Authorizer == nil || cfg.Facilitator == nil {
		return nil, errors.New("x402: NewEscrowRecovery needs MiddlewareConfig.Facilitator and an Escrow with a Ledger and an Authorizer")
	}
	settle := cmp.Or(cfg.SettleTimeout, DefaultSettleTimeout)
	grace := DefaultEscrowGrace
	for _, p := range cfg.Routes {
		grace = max(grace, 2*(p.timeBudget()+2*settle))
	}
	if cfg.PriceFunc != nil {
		// A priced route's time budget is known per request only; the
		// middleware refuses one that, with two settlements, does not
		// fit in the capture window.
		capture, _ := cfg.Escrow.windows()
		grace = max(grace, capture)
	}
	return &EscrowRecovery{Ledger: cfg.Escrow.Ledger, Facilitator: cfg.Facilitator, Authorizer: cfg.Escrow.Authorizer, Grace: grace}, nil
}
