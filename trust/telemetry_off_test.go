package trust

import (
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestWithTelemetry_off: the no-op providers given together switch every
// hook off, the receipt store's included; without the option the global
// providers are used.
func TestWithTelemetry_off(t *testing.T) {
	e, err := router.NewEngine(routertest.Sessions(1, 1, routertest.Verdict(router.VerdictValid)))
	if err != nil {
		t.Fatal(err)
	}
	store := &receipt.MemStore{}
	off, err := New(e, WithReceipts(&receipt.Issuer{Store: store}),
		WithTelemetry(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	if off.tel != nil || off.issuer.Store != receipt.Store(store) {
		t.Errorf("with the no-op providers: telemetry %v, store %T; want none, and the store unwrapped", off.tel, off.issuer.Store)
	}
	def, err := New(e, WithReceipts(&receipt.Issuer{Store: store}))
	if err != nil {
		t.Fatal(err)
	}
	if _, wrapped := def.issuer.Store.(*loggedStore); def.tel == nil || !wrapped {
		t.Errorf("by default: telemetry %v, store %T; want the global providers' and the store wrapped", def.tel, def.issuer.Store)
	}
}
