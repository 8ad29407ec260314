package escrow

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/vouchkit/vouch/x402"
)

// Escrow recovery's defaults.
const (
	// DefaultGrace is how long after its hold a payment without a
	// verdict is left to the server running its work, when
	// [Recovery].Grace is zero: twice a route's default time budget
	// and two default settlements (the hold's and the capture's).
	DefaultGrace = 2 * time.Minute
	// DefaultClaim is how long a recovery's claim on a payment
	// lasts, when [Recovery].Claim is zero.
	DefaultClaim = time.Minute
)

// A Claimer is an [x402.EscrowLedger] shared by several servers that
// lets one of them at a time finish a payment, so that servers recovering
// at once do not each send its operation: Claim gives the caller the
// payment id until the time until, and reports whether it did; it does
// when the payment is Held and no claim on it lasts beyond now (a
// finished payment, or one the ledger no longer holds, is not claimed:
// false, without an error). A claim that lapses (its server died) may be
// taken again. The durable ledgers of packages x402/boltstore and
// pgstore are Claimers; package x402test's TestEscrowLedger checks them.
type Claimer interface {
	Claim(ctx context.Context, id string, now, until time.Time) (bool, error)
}

// Recovery finishes the escrowed payments that a server held and
// did not finish: a server that died between a hold and its verdict, or
// between the verdict and its capture or void, leaves the payment Held
// in the ledger, and the payer's funds locked until the capture deadline.
// A server runs [Recovery.Finish] when it starts, before it serves
// (and may run it every few minutes after), so that such payments are
// finished well before their capture deadline.
//
// Each Held payment is finished by its recorded verdict: captured by the
// amount [x402.EscrowLedger.Decide] recorded, or voided when that amount is
// "0", when there is no verdict at all, or when the facilitator refused
// its capture. The capture is keyed "capture" and
// the void "void", as the route keys them, so an operation the route
// already sent is replayed, not sent again ([x402.SettleEscrow]): Finish run
// twice, or on two servers at once, runs each operation once.
//
// When the ledger is an [Claimer], each payment is claimed before
// its operation is sent, and a payment another server claimed is left
// to it: N servers recovering at once send each operation once. Without
// a claim two servers may both send it, and the facilitator's
// idempotency answers the second with the first's outcome.
//
// A payment without a verdict may still be running on a live server; it
// is voided only once it was held longer than Grace ago, which must
// exceed the longest work the route runs behind a hold. A payment whose
// capture deadline has passed is left to its payer, who reclaims it.
type Recovery struct {
	// Ledger is the ledger of the payments; required.
	Ledger x402.EscrowLedger
	// Facilitator settles the operations; required.
	Facilitator x402.Facilitator
	// Authorizer consents to them; required.
	Authorizer x402.EscrowAuthorizer
	// Grace is how long after its hold a payment without a verdict is
	// left alone; zero means DefaultGrace.
	Grace time.Duration
	// Claim is how long a claim on a payment lasts (see
	// [Claimer]); each operation Finish sends is abandoned,
	// unrecorded, after half of it, so that the claim outlasts the
	// operation. Zero means DefaultClaim.
	Claim time.Duration
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Finished is what [Recovery.Finish] did to one payment.
type Finished struct {
	// ID is the payment.
	ID string
	// Outcome is the outcome of the capture or void that finished it,
	// as the ledger keeps it.
	Outcome x402.EscrowOutcome
	// Sent reports whether this Finish sent it (false when it replayed
	// an outcome recorded before).
	Sent bool
}

// Finish finishes every Held payment it may (see [Recovery]) and
// reports what it did, in the order of their holds. It goes on past a
// payment it cannot finish (its facilitator unreachable, say) and
// returns those errors joined; the payment stays Held for the next run.
func (r *Recovery) Finish(ctx context.Context) ([]Finished, error) {
	if r.Ledger == nil || r.Facilitator == nil || r.Authorizer == nil {
		return nil, errors.New("escrow: Recovery needs a Ledger, a Facilitator and an Authorizer")
	}
	clock := time.Now
	if r.Now != nil {
		clock = r.Now
	}
	// A payment is judged as it was listed, at now; it is claimed from
	// the moment the run reaches it, since the operations before it may
	// have taken most of a claim, which would then lapse while its own
	// is in flight.
	now := clock()
	grace := r.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	// Each operation is abandoned, unrecorded, after half the claim, so
	// that the claim never lapses while it is in flight: a facilitator
	// that hangs does not let another server send the same operation.
	claim := cmp.Or(r.Claim, DefaultClaim)
	settle := boundedSettle{r.Facilitator, claim / 2}
	held, err := r.Ledger.Unfinished(ctx, 0)
	if err != nil {
		return nil, err
	}
	var (
		done []Finished
		errs []error
	)
	for _, p := range held {
		if !now.Before(p.CaptureDeadline) {
			continue // the payer's to reclaim
		}
		op, key, amount := x402.EscrowVoid, x402.EscrowVoid, ""
		refused, _ := p.Outcome(x402.EscrowCapture) // a capture the facilitator refused is voided
		switch {
		case p.Capture != "" && p.Capture != "0" && refused.Key == "":
			op, key, amount = x402.EscrowCapture, x402.EscrowCapture, p.Capture
		case p.Capture == "" && now.Sub(p.HeldAt) < grace:
			continue // its work may still be running
		}
		if c, ok := r.Ledger.(Claimer); ok {
			at := clock()
			mine, err := c.Claim(ctx, p.ID, at, at.Add(claim))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !mine {
				continue // another server finishes it
			}
		}
		o, sent, err := x402.SettleEscrow(ctx, r.Ledger, settle, r.Authorizer, p.ID, key, op, amount)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, Finished{ID: p.ID, Outcome: o, Sent: sent})
	}
	return done, errors.Join(errs...)
}

// NewRecovery returns the recovery of the "auth-capture" routes cfg
// configures for [x402.Middleware]: its ledger, facilitator and authorizer,
// and a Grace of the longest route's time budget plus two settlements
// (the hold and the capture), doubled, or DefaultGrace if longer.
// With a PriceFunc, whose prices' time budgets are known per request
// only, the Grace is at least the capture window, the longest such a
// price may run behind a hold (a hold without a verdict is then left to
// its payer, who reclaims it after its capture deadline); a host that
// knows its longest budget may set a shorter Grace.
// A server runs its Finish before it serves:
//
//	r, err := escrow.NewRecovery(cfg)
//	if err != nil { ... }
//	if _, err := r.Finish(ctx); err != nil { ... } // logged; the rest retried next time
//	mw, err := x402.Middleware(cfg)
//
// It fails when cfg has no Facilitator, or no Escrow with a Ledger (a new
// memory ledger holds nothing to recover) and an Authorizer.
func NewRecovery(cfg x402.MiddlewareConfig) (*Recovery, error) {
	if cfg.Escrow == nil || cfg.Escrow.Ledger == nil || cfg.Escrow.Authorizer == nil || cfg.Facilitator == nil {
		return nil, errors.New("escrow: NewRecovery needs MiddlewareConfig.Facilitator and an Escrow with a Ledger and an Authorizer")
	}
	settle := cmp.Or(cfg.SettleTimeout, x402.DefaultSettleTimeout)
	grace := DefaultGrace
	for _, p := range cfg.Routes {
		grace = max(grace, 2*(cmp.Or(p.TimeBudget, x402.DefaultTimeBudget)+2*settle))
	}
	if cfg.PriceFunc != nil {
		// A priced route's time budget is known per request only; the
		// middleware refuses one that, with two settlements, does not
		// fit in the capture window.
		grace = max(grace, cmp.Or(cfg.Escrow.CaptureWindow, x402.DefaultCaptureWindow))
	}
	return &Recovery{Ledger: cfg.Escrow.Ledger, Facilitator: cfg.Facilitator, Authorizer: cfg.Escrow.Authorizer, Grace: grace}, nil
}

// boundedSettle settles on a context detached from the caller's and
// bounded by timeout, so that a run cancelled does not cancel a lifecycle
// operation half way.
type boundedSettle struct {
	x402.Facilitator
	timeout time.Duration
}

func (b boundedSettle) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.timeout)
	defer cancel()
	return b.Facilitator.Settle(ctx, p, r)
}
