package x402

import (
	"context"
	"net/http"
	"sync"
)

// VerifiedPayment is a payment the facilitator verified, given to the
// handler of a priced request through its context. It is settled after
// the handler returns, if the handler succeeds.
type VerifiedPayment struct {
	// Payer is the address that signed the payment, as the facilitator
	// verified it; when its answer names none, the from of the payload's
	// EIP-3009 or Permit2 authorization, whose signature it checked. It
	// is "" only for a payload that names no signer either.
	Payer string
	// Offer is the route's offer the payment pays.
	Offer PaymentRequirements
	// Payload is the proof as received.
	Payload *PaymentPayload
	// Settlement is the settlement, on a route that settles before the
	// work (Price.SettleBefore); nil on the others, where the payment is
	// settled after the handler returns.
	Settlement *SettleResponse
	// Escrow is the payment held in escrow, on an "auth-capture" route:
	// the hold placed and recorded before the handler runs (its ID,
	// Amount and deadlines), which the verdict then captures or voids;
	// nil on the others.
	Escrow *EscrowPayment

	outcome *paymentOutcome // nil unless settled after the handler
}

type verifiedCtx struct{}

// AfterSettle arranges for f to learn whether the payment of the request
// whose context is ctx was settled, on a route that [Middleware] settles
// after the handler returns: f is called once, with true when the payment
// settled (before the answer is sent), and with false when it will not be
// settled, so that the answer is not bought: its settlement failed or its
// outcome is unknown, the route's [DeliveryGate] refused the answer, the
// answer's status is 400 or more, or the handler panicked. f runs on the
// middleware's goroutine, after the handler returned; it must not block
// for long. AfterSettle reports false, and never calls f, when ctx
// carries no payment that is still to be settled: the request did not go
// through Middleware, its payment was settled before the handler ran
// (Price.SettleBefore), or it is a repeat answered from a [Replayer].
//
// A handler that keeps its answers to deliver them again (a Replayer)
// keeps an answer only once f learns it was paid for, so that no retry
// with a new proof gets as bought an answer whose payment did not
// settle.
//
// On a route with a [DeliveryGate], false after a failed settlement
// means not settled by this request: the Middleware keeps the answer
// ([Outcome].Unpaid), and a retry with the same proof may settle it
// later and is answered from that outcome, without calling f again. The
// handler does not learn of it, so a later call under the same
// Idempotency-Key that comes with a new proof, not the first, runs and
// is paid for again.
func AfterSettle(ctx context.Context, f func(settled bool)) bool {
	vp, ok := PaymentFromContext(ctx)
	if !ok || vp.outcome == nil {
		return false
	}
	vp.outcome.add(f)
	return true
}

// paymentOutcome calls the functions given to AfterSettle once the
// payment's fate is known.
type paymentOutcome struct {
	mu      sync.Mutex
	fs      []func(bool)
	ended   bool
	settled bool
}

// add calls f with the outcome, now when it is known and otherwise once
// it is.
func (o *paymentOutcome) add(f func(bool)) {
	o.mu.Lock()
	if !o.ended {
		o.fs = append(o.fs, f)
		o.mu.Unlock()
		return
	}
	settled := o.settled
	o.mu.Unlock()
	f(settled)
}

// end records the outcome, the first time it is called, and calls the
// functions waiting for it.
func (o *paymentOutcome) end(settled bool) {
	o.mu.Lock()
	if o.ended {
		o.mu.Unlock()
		return
	}
	fs := o.fs
	o.fs, o.ended, o.settled = nil, true, settled
	o.mu.Unlock()
	for _, f := range fs {
		f(settled)
	}
}

// Replayer is a paid handler that keeps its answers by Idempotency-Key
// and can deliver one again without doing the work again. [Middleware]
// calls ServeReplay, never ServeHTTP, for a repeat of a settled proof.
type Replayer interface {
	http.Handler
	// ServeReplay answers r with the answer kept for the earlier request
	// of the same caller with the same Idempotency-Key, method, path and
	// body, and reports true. The context of r carries the payment of
	// that earlier request ([PaymentFromContext]: its payer, as the
	// settlement reported it, and its settlement). When it has no such answer it reports false
	// and writes nothing. It must not do the request's work. A repeat
	// that arrives while the earlier request settles in this process is
	// asked once the settlement is recorded and, when that finds no
	// answer, again once the functions given to [AfterSettle] returned.
	ServeReplay(w http.ResponseWriter, r *http.Request) bool
}

// PaymentFromContext returns the verified payment of the request whose
// context is ctx, inside a handler behind [Middleware].
func PaymentFromContext(ctx context.Context) (*VerifiedPayment, bool) {
	vp, ok := ctx.Value(verifiedCtx{}).(*VerifiedPayment)
	return vp, ok
}
