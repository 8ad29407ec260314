package trust_test

import (
	"context"
	"crypto/ed25519"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestService_telemetryOneTrace checks that a trust call, its router
// calls, their replicas and its receipt are spans of one trace, and that
// the trace is the one the response and the receipt name.
func TestService_telemetryOneTrace(t *testing.T) {
	rec := telemetrytest.New(t)
	spans, tp, mp := rec.Spans, rec.TracerProvider, rec.MeterProvider

	_, priv, _ := ed25519.GenerateKey(nil)
	signer, err := receipt.NewEd25519Signer(priv)
	if err != nil {
		t.Fatal(err)
	}
	w := honest(0.95)
	engine, err := router.NewEngine([]router.Session{{ID: 1, Worker: w}, {ID: 2, Worker: w}, {ID: 3, Worker: w}},
		router.WithEngineTelemetry(tp, mp))
	if err != nil {
		t.Fatal(err)
	}
	issuer := &receipt.Issuer{Signer: signer, Store: &receipt.MemStore{}}
	s, err := trust.New(engine, trust.WithReceipts(issuer), trust.WithTelemetry(tp, mp))
	if err != nil {
		t.Fatal(err)
	}
	req := request(trust.ModeValidation, trust.PolicySafe)
	req.Receipt = receipt.Request{Mode: receipt.DeliveryInline, Include: receipt.Include{RouterTraceRefs: true}}
	resp, err := s.Call(trust.WithCaller(context.Background(), "alice"), req)
	if err != nil {
		t.Fatal(err)
	}

	count := map[string]int{}
	for _, sp := range spans.GetSpans() {
		count[sp.Name]++
		if got := sp.SpanContext.TraceID().String(); got != resp.TraceID {
			t.Errorf("span %s is in trace %s, want the response's %s", sp.Name, got, resp.TraceID)
		}
	}
	want := map[string]int{"trust.call": 1, "trust.router_call": 1, "router.consensus": 1, "router.replica": 3, "receipt.issue": 1}
	for name, n := range want {
		if count[name] != n {
			t.Errorf("%d spans %s, want %d (all: %v)", count[name], name, n, count)
		}
	}
	r, err := receipt.Parse(resp.Receipt)
	if err != nil {
		t.Fatal(err)
	}
	if r.CortensorRefs == nil || len(r.CortensorRefs.RouterTraceIDs) != 1 || r.CortensorRefs.RouterTraceIDs[0] != resp.TraceID {
		t.Errorf("receipt router_trace_ids = %+v, want [%s]", r.CortensorRefs, resp.TraceID)
	}

	found := map[string]int64{}
	for _, sm := range rec.Metrics(t).ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					found[m.Name] += p.Value
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					found[m.Name] += p.Sum
				}
			}
		}
	}
	if found["vouch.trust.calls"] != 1 || found["vouch.trust.runs"] != 3 || found["vouch.receipts.issued"] != 1 {
		t.Errorf("trust calls %d, runs %d, receipts %d; want 1, 3, 1", found["vouch.trust.calls"], found["vouch.trust.runs"], found["vouch.receipts.issued"])
	}
}

// TestService_telemetryJoinsCallerTrace checks that a call made with a
// trace id gets spans in that trace.
func TestService_telemetryJoinsCallerTrace(t *testing.T) {
	rec := telemetrytest.New(t)
	spans, tp := rec.Spans, rec.TracerProvider
	w := honest(0.95)
	s, err := trust.New(newEngine(t, w), trust.WithTelemetry(tp, nil))
	if err != nil {
		t.Fatal(err)
	}
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	resp, err := s.Call(router.WithTraceID(context.Background(), id), request(trust.ModeValidation, trust.PolicyFast))
	if err != nil {
		t.Fatal(err)
	}
	got := spans.GetSpans()
	if resp.TraceID != id || len(got) == 0 || got[len(got)-1].Name != "trust.call" || got[len(got)-1].SpanContext.TraceID().String() != id {
		t.Errorf("response trace %s, spans %v: want trust.call in trace %s", resp.TraceID, got, id)
	}
}
