package x402

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/telemetry"
)

// paywallTelemetry holds a Middleware's tracer and instruments. A nil
// *paywallTelemetry records nothing.
type paywallTelemetry struct {
	tracer   trace.Tracer
	client   []trace.SpanStartOption // of a span of kind client
	payments metric.Int64Counter
	refusals metric.Int64Counter
}

func newPaywallTelemetry(cfg *MiddlewareConfig) *paywallTelemetry {
	if telemetry.Off(cfg.TracerProvider, cfg.MeterProvider) {
		return nil
	}
	m := telemetry.Meter(cfg.MeterProvider, "x402")
	t := &paywallTelemetry{tracer: telemetry.Tracer(cfg.TracerProvider, "x402"), client: telemetry.Kind(trace.SpanKindClient)}
	var err error
	t.payments, err = m.Int64Counter("vouch.x402.payments", metric.WithUnit("{payment}"),
		metric.WithDescription("Facilitator answers: verify (valid, invalid), settle (success, failure) or an error, by reason."))
	telemetry.Handle(err)
	t.refusals, err = m.Int64Counter("vouch.x402.refusals", metric.WithUnit("{request}"),
		metric.WithDescription("Priced requests answered 402, by reason."))
	telemetry.Handle(err)
	return t
}

// Reasons of vouch.x402.refusals.
const (
	refusedMissing   = "payment_required"    // no proof sent
	refusedNoOffer   = "no_matching_offer"   // the proof matches no offer
	refusedUsed      = "already_used"        // the proof was accepted before
	refusedInvalid   = "invalid_payment"     // the facilitator found it invalid
	refusedValidity  = reasonValidity        // the authorization expires too soon
	refusedTooLong   = reasonValidityTooLong // the authorization is valid longer than MaxValidity
	refusedSettle    = "settlement_failed"   // settling failed
	refusedDelivery  = msgNotDelivered       // a DeliveryGate refused the answer
	reasonUnexpected = "unexpected_error"    // the facilitator call failed
)

// refused counts a 402 answer; reason and sr are require's.
func (t *paywallTelemetry) refused(reason string, sr *SettleResponse) {
	ctx := context.Background()
	if t == nil || !t.refusals.Enabled(ctx) {
		return
	}
	why := refusedInvalid
	switch {
	case sr != nil:
		why = refusedSettle
	case reason == msgNoProof:
		why = refusedMissing
	case reason == msgNoOffer:
		why = refusedNoOffer
	case reason == msgUsed:
		why = refusedUsed
	case strings.HasPrefix(reason, reasonValidity):
		why = refusedValidity
	case strings.HasPrefix(reason, reasonValidityTooLong):
		why = refusedTooLong
	case reason == msgNotDelivered:
		why = refusedDelivery
	}
	t.refusals.Add(ctx, 1, metric.WithAttributes(telemetry.Present(telemetry.PaymentReason.String(why))...))
}

// facilitator returns f instrumented: a span around each verify and
// settle, and each answer counted by result and reason.
func (t *paywallTelemetry) facilitator(f Facilitator) Facilitator {
	if t == nil {
		return f
	}
	return &tracedFacilitator{Facilitator: guard(f), t: t}
}

// tracedFacilitator is a Facilitator whose Verify and Settle are
// instrumented.
type tracedFacilitator struct {
	Facilitator
	t *paywallTelemetry
}

func (f *tracedFacilitator) Verify(ctx context.Context, p *PaymentPayload, r PaymentRequirements) (*VerifyResponse, error) {
	ctx, span := telemetry.Start(ctx, f.t.tracer, "x402.verify", f.t.client...)
	if span.IsRecording() {
		span.SetAttributes(telemetry.Network.String(r.Network), attribute.String("vouch.payment.scheme", r.Scheme))
	}
	defer span.End()
	vr, err := f.Facilitator.Verify(ctx, p, r)
	result, reason := "error", reasonUnexpected
	switch {
	case err != nil:
		telemetry.Fail(span, err)
	case vr.IsValid:
		result, reason = "valid", ""
	default:
		result, reason = "invalid", vr.InvalidReason
	}
	f.t.count(ctx, span, "verify", result, reason, r.Network)
	return vr, err
}

func (f *tracedFacilitator) Settle(ctx context.Context, p *PaymentPayload, r PaymentRequirements) (*SettleResponse, error) {
	ctx, span := telemetry.Start(ctx, f.t.tracer, "x402.settle", f.t.client...)
	if span.IsRecording() {
		span.SetAttributes(telemetry.Network.String(r.Network), attribute.String("vouch.payment.scheme", r.Scheme))
	}
	defer span.End()
	sr, err := f.Facilitator.Settle(ctx, p, r)
	result, reason := "error", reasonUnexpected
	switch {
	case err != nil:
		telemetry.Fail(span, err)
	case sr.Success:
		result, reason = "success", ""
		if span.IsRecording() {
			span.SetAttributes(attribute.String("vouch.payment.transaction", sr.Transaction))
		}
	default:
		result, reason = "failure", sr.ErrorReason
	}
	f.t.count(ctx, span, "settle", result, reason, r.Network)
	return sr, err
}

// count records a facilitator answer on span and in vouch.x402.payments,
// the span with the facilitator's reason and the counter with a reason
// the protocol or this module names (see meteredReason).
func (t *paywallTelemetry) count(ctx context.Context, span trace.Span, step, result, reason, network string) {
	if span.IsRecording() {
		span.SetAttributes(telemetry.Present(telemetry.PaymentResult.String(result), telemetry.PaymentReason.String(reason))...)
	}
	if t.payments.Enabled(ctx) {
		t.payments.Add(ctx, 1, metric.WithAttributes(telemetry.Present(attribute.String("vouch.payment.step", step),
			telemetry.PaymentResult.String(result), telemetry.PaymentReason.String(meteredReason(reason)),
			telemetry.Network.String(network))...))
	}
}
