package x402_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// madeUpReasons is a facilitator that finds its first two payments
// invalid and fails to settle the others, each time for a reason it makes
// up.
type madeUpReasons struct {
	*evm.Facilitator
	n atomic.Int64
}

func (f *madeUpReasons) Verify(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	if n := f.n.Add(1); n <= 2 {
		return &x402.VerifyResponse{InvalidReason: "made_up_" + strconv.FormatInt(n, 10)}, nil
	}
	return f.Facilitator.Verify(ctx, p, r)
}

func (f *madeUpReasons) Settle(_ context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	return &x402.SettleResponse{ErrorReason: "made_up_" + strconv.FormatInt(f.n.Load(), 10), Network: r.Network}, nil
}

// TestMiddleware_telemetryFacilitatorReasonBounded: a facilitator that
// gives a new reason with each answer makes no new series of
// vouch.x402.payments; each span keeps the reason the facilitator gave.
func TestMiddleware_telemetryFacilitatorReasonBounded(t *testing.T) {
	u, spans, counts := observedPaywall(t, &madeUpReasons{Facilitator: &evm.Facilitator{}})
	for range 4 {
		send(t, u, x402.HeaderPaymentSignature, proof(t, 2, nil))
	}
	want := map[string]int64{
		"vouch.payment.network=eip155:84532,vouch.payment.reason=_OTHER,vouch.payment.result=invalid,vouch.payment.step=verify": 2,
		"vouch.payment.network=eip155:84532,vouch.payment.result=valid,vouch.payment.step=verify":                               2,
		"vouch.payment.network=eip155:84532,vouch.payment.reason=_OTHER,vouch.payment.result=failure,vouch.payment.step=settle": 2,
	}
	if diff := cmp.Diff(want, counts("vouch.x402.payments")); diff != "" {
		t.Errorf("vouch.x402.payments (-want +got):\n%s", diff)
	}
	var reasons []string
	for _, s := range spans.GetSpans() {
		for _, a := range s.Attributes {
			if a.Key == "vouch.payment.reason" {
				reasons = append(reasons, s.Name+" "+a.Value.AsString())
			}
		}
	}
	wantReasons := []string{"x402.verify made_up_1", "x402.verify made_up_2", "x402.settle made_up_3", "x402.settle made_up_4"}
	if diff := cmp.Diff(wantReasons, reasons); diff != "" {
		t.Errorf("span reasons (-want +got):\n%s", diff)
	}
}

// TestPaymentTelemetry_facilitatorReasonBounded: the telemetry of another
// transport bounds a facilitator's reasons as Middleware does.
func TestPaymentTelemetry_facilitatorReasonBounded(t *testing.T) {
	rec := telemetrytest.New(t)
	f := x402.NewPaymentTelemetry("mcp", nil, rec.MeterProvider).Facilitator(&madeUpReasons{Facilitator: &evm.Facilitator{}})
	for range 2 {
		if _, err := f.Verify(t.Context(), &x402.PaymentPayload{X402Version: x402.Version2}, offer(t)); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int64{
		"vouch.x402.payments vouch.payment.network=eip155:84532,vouch.payment.reason=_OTHER,vouch.payment.result=invalid,vouch.payment.step=verify,vouch.payment.transport=mcp": 2,
	}
	if diff := cmp.Diff(want, rec.AllPoints(t)); diff != "" {
		t.Errorf("vouch.x402.payments (-want +got):\n%s", diff)
	}
}
