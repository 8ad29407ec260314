package x402

import (
	"context"
	"net/http"
)

// VerifiedPayment is a payment the facilitator verified, given to the
// handler of a priced request through its context. It is settled after
// the handler returns, if the handler succeeds.
type VerifiedPayment struct {
	// Payer is the address that signed the payment.
	Payer string
	// Offer is the route's offer the payment pays.
	Offer PaymentRequirements
	// Payload is the proof as received.
	Payload *PaymentPayload
	// Settlement is the settlement, on a route that settles before the
	// work (Price.SettleBefore); nil on the others, where the payment is
	// settled after the handler returns.
	Settlement *SettleResponse
}

type verifiedCtx struct{}

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
	// and writes nothing. It must not do the request's work.
	ServeReplay(w http.ResponseWriter, r *http.Request) bool
}

// PaymentFromContext returns the verified payment of the request whose
// context is ctx, inside a handler behind [Middleware].
func PaymentFromContext(ctx context.Context) (*VerifiedPayment, bool) {
	vp, ok := ctx.Value(verifiedCtx{}).(*VerifiedPayment)
	return vp, ok
}
