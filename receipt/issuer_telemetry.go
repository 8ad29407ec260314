package receipt

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/telemetry"
)

// issuerTelemetry holds an Issuer's tracer and instruments, made at its
// first Issue from its providers.
type issuerTelemetry struct {
	once   sync.Once
	off    bool // the host passed the no-op providers: record nothing
	tracer trace.Tracer
	issued metric.Int64Counter
}

// telemetry returns the Issuer's tracer and instruments.
func (is *Issuer) telemetry() *issuerTelemetry {
	t := &is.tel
	t.once.Do(func() {
		if telemetry.Off(is.TracerProvider, is.MeterProvider) {
			t.off = true
			return
		}
		m := telemetry.Meter(is.MeterProvider, "receipt")
		t.tracer = telemetry.Tracer(is.TracerProvider, "receipt")
		var err error
		t.issued, err = m.Int64Counter("vouch.receipts.issued", metric.WithUnit("{receipt}"),
			metric.WithDescription("Receipts issued and stored, by delivery and whether signed."))
		telemetry.Handle(err)
	})
	return t
}

// start starts the span of issuing a receipt; the span of appending it
// to a log, when there is one, is its child.
func (t *issuerTelemetry) start(ctx context.Context, p *Params) (context.Context, trace.Span) {
	if t.off {
		return ctx, trace.SpanFromContext(ctx)
	}
	ctx, span := telemetry.Start(ctx, t.tracer, "receipt.issue")
	if span.IsRecording() {
		span.SetAttributes(telemetry.Mode.String(p.Mode), telemetry.ReceiptMode.String(string(p.Request.Mode)))
	}
	return ctx, span
}

// done records the receipt issued on span and in vouch.receipts.issued.
func (t *issuerTelemetry) done(ctx context.Context, span trace.Span, iss *Issued) {
	if t.off {
		return
	}
	signed := iss.Receipt.Signing != nil
	if span.IsRecording() {
		span.SetAttributes(telemetry.ReceiptID.String(iss.Receipt.ReceiptID), telemetry.Signed.Bool(signed))
	}
	if t.issued.Enabled(ctx) {
		t.issued.Add(ctx, 1, metric.WithAttributes(
			telemetry.ReceiptMode.String(string(iss.Delivery)), telemetry.Signed.Bool(signed)))
	}
}
