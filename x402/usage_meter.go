package x402

import "context"

// UsageMeter collects the usage that the work paid by one "upto" payment
// reports with [ReportUsage], for a server that carries payments outside
// HTTP headers and settles them itself (as the x402 MCP transport does,
// see package trust/trustmcp), under the rules [Middleware] applies to a
// route: the last report wins, nothing above the authorized maximum is
// accepted, and a report after Charge is refused with ErrUsageClosed.
type UsageMeter struct {
	m     *meter // nil when the offer is not "upto"
	offer PaymentRequirements
}

// MeterUsage returns ctx with a meter for a payment of offer, so that
// [ReportUsage] on ctx, or on a context derived from it, reaches the
// meter; run the paid work on that context, then call Charge. When offer
// is neither "upto" nor "auth-capture", ctx is returned as it is
// (ReportUsage then returns ErrNotUpto) and Charge returns offer. Like Middleware, MeterUsage
// takes offer's amount as the authorized maximum; an amount that does
// not parse is a maximum of zero.
func MeterUsage(ctx context.Context, offer PaymentRequirements) (context.Context, *UsageMeter) {
	ctx, m := withMeter(ctx, offer)
	return ctx, &UsageMeter{m: m, offer: offer}
}

// Charge closes the meter and returns the offer to settle: for an "upto"
// payment whose work reported its usage, the offer with Amount the amount
// used, and that usage (with MaxAmount, the authorized maximum); else the
// offer unchanged, the whole maximum, and nil.
func (u *UsageMeter) Charge() (PaymentRequirements, *Usage) {
	return u.m.charge(u.offer)
}

// SetUsage reports u in sr's extensions (see [ExtensionUsage]), where
// [UsageFromSettlement] reads it, as Middleware reports the usage an
// "upto" payment was settled for. It replaces sr.Extensions with a copy,
// so that a map sr shared is not changed.
func (sr *SettleResponse) SetUsage(u Usage) {
	withUsage(sr, &u)
}

// Verdict returns the verdict the work named with [ReportVerdict] on the
// meter's context, and "" when it named none or the offer is neither
// "upto" nor "auth-capture".
func (u *UsageMeter) Verdict() string {
	return u.m.reportedVerdict()
}
