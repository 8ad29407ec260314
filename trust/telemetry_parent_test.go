package trust_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/codes"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestService_telemetryOffLeavesServerSpan checks that a Service whose
// telemetry is off does not end the span of the request that called it:
// the Handler's server span still gets the response's status code.
func TestService_telemetryOffLeavesServerSpan(t *testing.T) {
	rec := telemetrytest.New(t)
	s, err := trust.New(newEngine(t, honest(0.95), honest(0.95), honest(0.95)),
		trust.WithTelemetry(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	h, err := trust.NewHandler(s, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: "alice"})),
		trust.WithHandlerTelemetry(rec.TracerProvider, rec.MeterProvider))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	if _, err := newClient(t, srv.URL).Call(context.Background(), validationRequest()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sp := range rec.Spans.GetSpans() {
		status := "none"
		for _, kv := range sp.Attributes {
			if kv.Key == "http.response.status_code" {
				status = kv.Value.String()
			}
		}
		got = append(got, sp.Name+" "+status)
	}
	if diff := cmp.Diff([]string{"POST " + trust.CallPath + " 200"}, got); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
}

// TestService_telemetryFailedCall checks that a call that fails marks its
// spans as failed.
func TestService_telemetryFailedCall(t *testing.T) {
	rec := telemetrytest.New(t)
	failing := router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
		return nil, errors.New("worker down")
	})
	s, err := trust.New(newEngine(t, failing, failing, failing), trust.WithTelemetry(rec.TracerProvider, rec.MeterProvider))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Call(context.Background(), request(trust.ModeValidation, trust.PolicySafe)); err == nil {
		t.Fatal("a call on failing workers succeeded")
	}
	got := map[string]codes.Code{}
	for _, sp := range rec.Spans.GetSpans() {
		if sp.Name == "trust.call" || sp.Name == "trust.router_call" {
			got[sp.Name] = sp.Status.Code
		}
	}
	want := map[string]codes.Code{"trust.call": codes.Error, "trust.router_call": codes.Error}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("span status (-want +got):\n%s", diff)
	}
}

// TestService_telemetryOffKeepsCallerTrace checks that a Service whose
// telemetry is off answers in the trace of its caller's span.
func TestService_telemetryOffKeepsCallerTrace(t *testing.T) {
	rec := telemetrytest.New(t)
	s, err := trust.New(newEngine(t, honest(0.95), honest(0.95), honest(0.95)),
		trust.WithTelemetry(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, span := rec.TracerProvider.Tracer("test").Start(context.Background(), "caller")
	defer span.End()
	resp, err := s.Call(ctx, request(trust.ModeValidation, trust.PolicySafe))
	if err != nil {
		t.Fatal(err)
	}
	if want := span.SpanContext().TraceID().String(); resp.TraceID != want {
		t.Errorf("trace id %s, want the caller's %s", resp.TraceID, want)
	}
}
