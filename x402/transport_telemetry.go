package x402

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// PaymentTelemetry records the payments of a server that carries them
// outside HTTP headers (such as the MCP transport's _meta["x402/payment"])
// as [Middleware] records its own: the x402.verify and x402.settle spans
// and the vouch.x402.payments and vouch.x402.refusals counters, under the
// same names, each with the attribute vouch.payment.transport naming the
// transport. A nil *PaymentTelemetry records nothing.
type PaymentTelemetry struct {
	t *paywallTelemetry
}

// NewPaymentTelemetry returns the telemetry of transport (such as "mcp")
// on the providers tp and mp; nil means the global providers, as in
// MiddlewareConfig. It returns nil when both are the API's no-op
// providers.
func NewPaymentTelemetry(transport string, tp trace.TracerProvider, mp metric.MeterProvider) *PaymentTelemetry {
	t := newPaywallTelemetry(&MiddlewareConfig{TracerProvider: tp, MeterProvider: mp})
	if t == nil {
		return nil
	}
	kv := attribute.String("vouch.payment.transport", transport)
	t.client = append(t.client, trace.WithAttributes(kv))
	t.payments = withAttribute{t.payments, metric.WithAttributes(kv)}
	t.refusals = withAttribute{t.refusals, metric.WithAttributes(kv)}
	return &PaymentTelemetry{t: t}
}

// Facilitator returns f instrumented: a span around each verify and
// settle, and each answer counted in vouch.x402.payments.
func (pt *PaymentTelemetry) Facilitator(f Facilitator) Facilitator {
	if pt == nil {
		return f
	}
	return pt.t.facilitator(f)
}

// Refused counts in vouch.x402.refusals a priced call answered with the
// payment terms. reason is the terms' error, "" when the call carried no
// payment; it is classified as Middleware classifies its 402 answers
// ("the payment was already used", "the payment matches none of the
// accepted offers", a reason starting with
// "authorization_validity_too_short" or "authorization_validity_too_long",
// any other as invalid_payment). sr
// is the failed settlement, if any (settlement_failed).
func (pt *PaymentTelemetry) Refused(reason string, sr *SettleResponse) {
	if pt == nil {
		return
	}
	if reason == "" && sr == nil {
		reason = msgNoProof
	}
	pt.t.refused(reason, sr)
}

// withAttribute is a counter that adds an attribute to every measurement.
type withAttribute struct {
	metric.Int64Counter
	opt metric.AddOption
}

func (c withAttribute) Add(ctx context.Context, n int64, opts ...metric.AddOption) {
	c.Int64Counter.Add(ctx, n, append(opts, c.opt)...)
}
