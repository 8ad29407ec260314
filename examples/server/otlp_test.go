package main

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/vouchkit/vouch/receipt"
)

// TestRun_otlpTraces points OTEL_EXPORTER_OTLP_ENDPOINT at a fake
// collector, makes a trust call, stops the server (which flushes the
// spans) and finds the call's spans, in the trace the response names,
// among what the collector received.
func TestRun_otlpTraces(t *testing.T) {
	var mu sync.Mutex
	spans := map[string]string{} // span name → trace id (hex)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					spans[s.GetName()] = hex.EncodeToString(s.GetTraceId())
				}
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		resp, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		_, _ = w.Write(resp)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)

	base, _, stop := startServer(t)
	resp, err := trustClient(t, base, defaultAPIKey).Call(context.Background(), validation(receipt.Request{Mode: receipt.DeliveryInline}))
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range []string{"POST /api/v4/trust", "trust.call", "trust.router_call", "router.consensus", "router.replica", "receipt.issue"} {
		if got, ok := spans[name]; !ok || got != resp.TraceID {
			t.Errorf("span %q: exported %v in trace %s, want it in the response's trace %s", name, ok, got, resp.TraceID)
		}
	}
}
