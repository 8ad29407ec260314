package trust_test

import (
	"context"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// BenchmarkCall_receiptTelemetry measures a fast-tier validation on one
// instant worker that issues a detached receipt into a MemStore (which
// keeps a log): with the instrumentation off (the no-op providers) and
// with the default global providers and no SDK.
func BenchmarkCall_receiptTelemetry(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts []trust.Option
	}{
		{"off", []trust.Option{trust.WithTelemetry(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider())}},
		{"global", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e, err := router.NewEngine(routertest.Sessions(1, 1, honest(0.95)))
			if err != nil {
				b.Fatal(err)
			}
			s, err := trust.New(e, append(bc.opts, trust.WithReceipts(&receipt.Issuer{Store: &receipt.MemStore{}}))...)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				req := request(trust.ModeValidation, trust.PolicyFast)
				req.Receipt = receipt.Request{Mode: receipt.DeliveryDetached}
				if _, err := s.Call(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
