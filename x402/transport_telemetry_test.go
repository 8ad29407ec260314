package x402_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

func TestPaymentTelemetry(t *testing.T) {
	f := &evm.Facilitator{}
	pt := x402.NewPaymentTelemetry("mcp", tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider())
	if pt != nil || pt.Facilitator(f) != x402.Facilitator(f) {
		t.Errorf("with no-op providers: %v, want nil, recording nothing", pt)
	}
	pt.Refused("", nil) // a nil PaymentTelemetry records nothing
	rec := telemetrytest.New(t)
	pt = x402.NewPaymentTelemetry("mcp", nil, rec.MeterProvider)
	pt.Refused("", nil)
	pt.Refused("the payment was already used", nil)
	pt.Refused("settlement failed: insufficient_funds", &x402.SettleResponse{ErrorReason: "insufficient_funds"})
	pt.Refused("_meta: does not decode", nil)
	got := rec.AllPoints(t)
	want := map[string]int64{
		"vouch.x402.refusals vouch.payment.reason=payment_required,vouch.payment.transport=mcp":  1,
		"vouch.x402.refusals vouch.payment.reason=already_used,vouch.payment.transport=mcp":      1,
		"vouch.x402.refusals vouch.payment.reason=settlement_failed,vouch.payment.transport=mcp": 1,
		"vouch.x402.refusals vouch.payment.reason=invalid_payment,vouch.payment.transport=mcp":   1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("vouch.x402.refusals (-want +got):\n%s", diff)
	}
}
