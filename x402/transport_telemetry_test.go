package x402_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

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
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	pt = x402.NewPaymentTelemetry("mcp", nil, mp)
	pt.Refused("", nil)
	pt.Refused("the payment was already used", nil)
	pt.Refused("settlement failed: insufficient_funds", &x402.SettleResponse{ErrorReason: "insufficient_funds"})
	pt.Refused("_meta: does not decode", nil)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				reason, _ := dp.Attributes.Value("vouch.payment.reason")
				transport, _ := dp.Attributes.Value("vouch.payment.transport")
				got[m.Name+" "+reason.AsString()+" "+transport.AsString()] = dp.Value
			}
		}
	}
	want := map[string]int64{
		"vouch.x402.refusals payment_required mcp":  1,
		"vouch.x402.refusals already_used mcp":      1,
		"vouch.x402.refusals settlement_failed mcp": 1,
		"vouch.x402.refusals invalid_payment mcp":   1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("vouch.x402.refusals (-want +got):\n%s", diff)
	}
}
