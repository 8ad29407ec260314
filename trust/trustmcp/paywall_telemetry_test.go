package trustmcp_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

// The paywall counts its payments under the x402 middleware's metric
// names, with vouch.payment.transport "mcp".
func TestPaywall_telemetry(t *testing.T) {
	rec := telemetrytest.New(t)
	r := newReplayRig(t, trustmcp.PaywallConfig{MeterProvider: rec.MeterProvider})
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

	got := rec.AllPoints(t)
	want := map[string]int64{
		"vouch.x402.refusals vouch.payment.reason=payment_required,vouch.payment.transport=mcp":                                                     1,
		"vouch.x402.refusals vouch.payment.reason=already_used,vouch.payment.transport=mcp":                                                         1,
		"vouch.x402.payments vouch.payment.network=eip155:84532,vouch.payment.result=valid,vouch.payment.step=verify,vouch.payment.transport=mcp":   1,
		"vouch.x402.payments vouch.payment.network=eip155:84532,vouch.payment.result=success,vouch.payment.step=settle,vouch.payment.transport=mcp": 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}
