package x402

import (
	"context"
	"errors"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/telemetry"
)

// Results of a payment on the paying side (vouch.payment.result of
// x402.pay and vouch.x402.client.payments).
const (
	paySettled  = "settled"  // the paid answer carries a successful settlement
	payAnswered = "answered" // the paid answer carries none (the server did not settle)
	payRejected = "rejected" // the server answered 402 to the paid request
	payUnknown  = "unknown"  // the paid request failed in transit, or its capture is pending: it may have settled
	payDeclined = "declined" // the Transport did not pay
	payError    = "error"    // paying failed (the Payer, the body, the context)
)

// Reasons of a declined or rejected payment.
const (
	reasonNoOffer    = "no_acceptable_offer"
	reasonBudget     = "budget_exceeded"
	reasonTerms      = "invalid_terms"
	reasonRedirected = "redirected"       // a 402 from another origin, reached by a redirect
	reasonRejected   = "payment_rejected" // a 402 without a settlement's errorReason
	reasonTransit    = "transport_error"
	reasonPending    = "payment_pending" // a 402 whose escrow hold stands, its capture to come
)

// Attribute keys of the paying side only.
const (
	payScheme = attribute.Key("vouch.payment.scheme")
	payAmount = attribute.Key("vouch.payment.amount")
	payAsset  = attribute.Key("vouch.payment.asset")
	payID     = attribute.Key("vouch.payment.id")
	payReused = attribute.Key("vouch.payment.reused")
	payStatus = attribute.Key("http.response.status_code")
)

// payerTelemetry holds a Transport's tracer and instruments. A nil
// *payerTelemetry records nothing.
type payerTelemetry struct {
	tracer   trace.Tracer
	payments metric.Int64Counter
}

// telemetry returns the Transport's telemetry, made on first use.
func (t *Transport) telemetry() *payerTelemetry {
	t.telOnce.Do(func() {
		if telemetry.Off(t.TracerProvider, t.MeterProvider) {
			return
		}
		m := telemetry.Meter(t.MeterProvider, "x402")
		pt := &payerTelemetry{tracer: telemetry.Tracer(t.TracerProvider, "x402")}
		var err error
		pt.payments, err = m.Int64Counter("vouch.x402.client.payments", metric.WithUnit("{payment}"),
			metric.WithDescription("Requests a Transport paid for or declined to pay, by result and reason."))
		telemetry.Handle(err)
		t.tel = pt
	})
	return t.tel
}

// payTrace follows one request that the Transport pays for or declines.
// A nil *payTrace records nothing.
type payTrace struct {
	t      *payerTelemetry
	span   trace.Span
	offer  PaymentRequirements
	reused bool
}

// start starts the span x402.pay, a child of the span in ctx.
func (pt *payerTelemetry) start(ctx context.Context) (context.Context, *payTrace) {
	if pt == nil {
		return ctx, nil
	}
	ctx, span := telemetry.Start(ctx, pt.tracer, "x402.pay")
	return ctx, &payTrace{t: pt, span: span}
}

// paying records the payment m that the request carries; reused reports
// that another request of the call made it.
func (p *payTrace) paying(m *memo, reused bool) {
	if p == nil {
		return
	}
	p.offer, p.reused = m.err.Offer, reused
	if p.span.IsRecording() {
		o := &m.err.Offer
		p.span.SetAttributes(telemetry.Network.String(o.Network), payScheme.String(o.Scheme),
			payAmount.String(o.Amount), payAsset.String(o.Asset), payID.String(m.err.ID), payReused.Bool(reused))
	}
}

// end ends the span with the answer to the request, resp or err, and
// counts the payment.
func (p *payTrace) end(ctx context.Context, resp *http.Response, err error) {
	if p == nil {
		return
	}
	defer p.span.End()
	recording, counting := p.span.IsRecording(), p.t.payments.Enabled(ctx)
	if !recording && !counting {
		return
	}
	result, reason := payResult(resp, err)
	if recording {
		p.span.SetAttributes(telemetry.Present(telemetry.PaymentResult.String(result), telemetry.PaymentReason.String(reason))...)
		if resp != nil {
			p.span.SetAttributes(payStatus.Int(resp.StatusCode))
		}
		telemetry.Fail(p.span, err)
	}
	if counting {
		if result == payRejected {
			// The server names the reason of a rejection: any string it
			// likes, which would make a time series of each. The span
			// keeps it; the count keeps the result alone.
			reason = reasonRejected
		}
		p.t.payments.Add(ctx, 1, metric.WithAttributes(telemetry.Present(telemetry.PaymentResult.String(result),
			telemetry.PaymentReason.String(reason), telemetry.Network.String(p.offer.Network), payReused.Bool(p.reused))...))
	}
}

// payResult classifies the answer to a paid or declined request.
func payResult(resp *http.Response, err error) (result, reason string) {
	var pe *PaymentError
	switch {
	case err == nil:
		if s, err := settlementFromHeader(resp.Header); err == nil && s.Success {
			return paySettled, ""
		}
		return payAnswered, ""
	case errors.Is(err, ErrNoAcceptableOffer):
		return payDeclined, reasonNoOffer
	case errors.Is(err, ErrBudgetExceeded):
		return payDeclined, reasonBudget
	case errors.Is(err, ErrInvalidTerms), errors.Is(err, ErrUnsupportedVersion):
		return payDeclined, reasonTerms
	case errors.Is(err, ErrRedirectedPayment):
		return payDeclined, reasonRedirected
	case errors.As(err, &pe) && errors.Is(err, ErrPaymentPending):
		return payUnknown, reasonPending
	case errors.As(err, &pe) && errors.Is(err, ErrPaymentRejected):
		if pe.Settlement != nil && pe.Settlement.ErrorReason != "" {
			return payRejected, pe.Settlement.ErrorReason
		}
		return payRejected, reasonRejected
	case errors.As(err, &pe):
		return payUnknown, reasonTransit
	}
	return payError, ""
}
