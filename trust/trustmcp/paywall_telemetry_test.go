package trustmcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/vouchkit/vouch/trust/trustmcp"
)

// The paywall counts its payments under the x402 middleware's metric
// names, with vouch.payment.transport "mcp".
func TestPaywall_telemetry(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	r := newReplayRig(t, trustmcp.PaywallConfig{MeterProvider: mp})
	cs := connect(t, r.srv)
	ctx := context.Background()

	if res := callTool(t, cs, "square", map[string]any{"n": 2}); !res.IsError {
		t.Fatalf("unpaid call ran: %s", text(res))
	}
	p := r.payment(t)
	for _, n := range []int{2, 2, 3} { // paid, delivered again, already used
		if _, err := paidCall(ctx, t, cs, "square", n, p); err != nil {
			t.Fatal(err)
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				var kv []string
				for _, a := range dp.Attributes.ToSlice() {
					kv = append(kv, string(a.Key)+"="+a.Value.String())
				}
				got[m.Name+" "+strings.Join(kv, ",")] = dp.Value
			}
		}
	}
	want := map[string]int64{
		"vouch.x402.refusals vouch.payment.reason=payment_required,vouch.payment.transport=mcp":                                                                           1,
		"vouch.x402.refusals vouch.payment.reason=already_used,vouch.payment.transport=mcp":                                                                               1,
		"vouch.x402.payments vouch.payment.network=eip155:84532,vouch.payment.reason=,vouch.payment.result=valid,vouch.payment.step=verify,vouch.payment.transport=mcp":   1,
		"vouch.x402.payments vouch.payment.network=eip155:84532,vouch.payment.reason=,vouch.payment.result=success,vouch.payment.step=settle,vouch.payment.transport=mcp": 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}
