package x402_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// observedPaywall serves echo at "POST /paid" behind a middleware whose
// spans and metrics are recorded in memory.
func observedPaywall(t *testing.T, fac x402.Facilitator) (url string, spans *tracetest.InMemoryExporter, counts func(name string) map[string]int64) {
	t.Helper()
	rec := telemetrytest.New(t)
	spans = rec.Spans
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator:    fac,
		Routes:         map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{offer(t)}}},
		TracerProvider: rec.TracerProvider,
		MeterProvider:  rec.MeterProvider,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(http.HandlerFunc(echo)))
	t.Cleanup(srv.Close)
	counts = func(name string) map[string]int64 {
		if points := rec.Points(t)[name]; points != nil {
			return points
		}
		return map[string]int64{}
	}
	return srv.URL, spans, counts
}

func spanNames(spans *tracetest.InMemoryExporter) []string {
	var names []string
	for _, s := range spans.GetSpans() {
		names = append(names, s.Name)
	}
	return names
}

func TestMiddleware_telemetryRefusedByReason(t *testing.T) {
	u, spans, counts := observedPaywall(t, &evm.Facilitator{})
	send(t, u, x402.HeaderPaymentSignature, "") // no proof
	bad := proof(t, 2, func(p *x402.PaymentPayload, ep *evm.ExactPayload) { ep.Authorization.Value = "999" })
	if resp := send(t, u, x402.HeaderPaymentSignature, bad); resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("status = %d, want 402", resp.StatusCode)
	}
	tooLong := proof(t, 2, func(p *x402.PaymentPayload, ep *evm.ExactPayload) {
		ep.Authorization.ValidBefore = strconv.FormatInt(time.Now().Add(x402.DefaultMaxValidity+time.Hour).Unix(), 10)
	})
	if resp := send(t, u, x402.HeaderPaymentSignature, tooLong); resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("status = %d, want 402", resp.StatusCode)
	}
	wantRefusals := map[string]int64{
		"vouch.payment.reason=payment_required":                1,
		"vouch.payment.reason=invalid_payment":                 1,
		"vouch.payment.reason=authorization_validity_too_long": 1,
	}
	if diff := cmp.Diff(wantRefusals, counts("vouch.x402.refusals")); diff != "" {
		t.Errorf("vouch.x402.refusals (-want +got):\n%s", diff)
	}
	wantPayments := map[string]int64{
		"vouch.payment.network=eip155:84532,vouch.payment.reason=" + evm.ReasonValue + ",vouch.payment.result=invalid,vouch.payment.step=verify": 1,
	}
	if diff := cmp.Diff(wantPayments, counts("vouch.x402.payments")); diff != "" {
		t.Errorf("vouch.x402.payments (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"x402.verify"}, spanNames(spans)); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
}

func TestMiddleware_telemetrySettled(t *testing.T) {
	u, spans, counts := observedPaywall(t, &evm.Facilitator{})
	if resp := send(t, u, x402.HeaderPaymentSignature, proof(t, 2, nil)); resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d, want 200", resp.StatusCode)
	}
	want := map[string]int64{
		"vouch.payment.network=eip155:84532,vouch.payment.result=valid,vouch.payment.step=verify":   1,
		"vouch.payment.network=eip155:84532,vouch.payment.result=success,vouch.payment.step=settle": 1,
	}
	if diff := cmp.Diff(want, counts("vouch.x402.payments")); diff != "" {
		t.Errorf("vouch.x402.payments (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"x402.verify", "x402.settle"}, spanNames(spans)); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
}

func TestMiddleware_telemetrySettlementFailed(t *testing.T) {
	u, _, counts := observedPaywall(t, failingSettle{&evm.Facilitator{}})
	send(t, u, x402.HeaderPaymentSignature, proof(t, 2, nil))
	if got := counts("vouch.x402.refusals"); !cmp.Equal(got, map[string]int64{"vouch.payment.reason=settlement_failed": 1}) {
		t.Errorf("vouch.x402.refusals = %v, want one settlement_failed", got)
	}
	if got := counts("vouch.x402.payments"); got["vouch.payment.network=eip155:84532,vouch.payment.reason=insufficient_funds,vouch.payment.result=failure,vouch.payment.step=settle"] != 1 {
		t.Errorf("vouch.x402.payments = %v, want a settle failure for insufficient_funds", got)
	}
}
