package main

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"

	"github.com/vouchkit/vouch/receipt"
)

// exported is a span as the collector received it.
type exported struct {
	trace, id, parent string
}

// TestRun_otlpTraces points OTEL_EXPORTER_OTLP_ENDPOINT at a fake
// collector, makes a trust call over HTTP, and a tool call over MCP and a
// message over A2A with a traceparent each, stops the server (which flushes the spans) and finds the
// calls' spans among what the collector received: the trust call's in
// the trace the response names, and the MCP and A2A calls' in their
// callers' traces, each span the child of the one that carried it (the
// HTTP request, the tool call, the trust call). No span has an attribute set
// to an empty string.
func TestRun_otlpTraces(t *testing.T) {
	var mu sync.Mutex
	byName := map[string][]exported{} // every span of each name
	var empty []string                // "span: attribute" set to ""
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
					byName[s.GetName()] = append(byName[s.GetName()], exported{hex.EncodeToString(s.GetTraceId()),
						hex.EncodeToString(s.GetSpanId()), hex.EncodeToString(s.GetParentSpanId())})
					for _, kv := range s.GetAttributes() {
						if v, ok := kv.GetValue().GetValue().(*commonpb.AnyValue_StringValue); ok && v.StringValue == "" {
							empty = append(empty, s.GetName()+": "+kv.GetKey())
						}
					}
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
	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	const a2aTrace = "0af7651916cd43dd8448eb211c80319c"
	// An MCP tool call and an A2A message, each with a traceparent.
	for _, c := range []struct{ path, trace, body string }{
		{mcpPath, callerTrace, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"validate_claim","arguments":{"claimed_result":"17 * 3 = 51","policy":"fast"}}}`},
		{a2aPath, a2aTrace, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user",` +
			`"parts":[{"kind":"text","text":"Validate the claimed result \"17 * 3 = 51\" for the task \"What is 17 * 3?\""}]}}}`},
	} {
		req, _ := http.NewRequest(http.MethodPost, base+c.path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+defaultAPIKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("traceparent", "00-"+c.trace+"-"+callerSpan+"-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range []string{"POST /api/v4/trust", "trust.call", "trust.router_call", "router.consensus", "router.replica", "receipt.issue"} {
		found := false
		for _, s := range byName[name] {
			found = found || s.trace == resp.TraceID
		}
		if !found {
			t.Errorf("span %q: none exported in the response's trace %s: %v", name, resp.TraceID, byName[name])
		}
	}
	if len(empty) > 0 {
		t.Errorf("attributes set to an empty string: %v", empty)
	}
	// The MCP call: caller → POST /mcp → tools/call → trust.call; the A2A
	// call: caller → POST /a2a → trust.call.
	for _, chain := range []struct {
		trace string
		names []string
	}{
		{callerTrace, []string{"POST /mcp", "tools/call validate_claim", "trust.call"}},
		{a2aTrace, []string{"POST /a2a", "trust.call"}},
	} {
		parent := callerSpan
		for _, name := range chain.names {
			var found *exported
			for _, s := range byName[name] {
				if s.trace == chain.trace && s.parent == parent {
					found = &s
				}
			}
			if found == nil {
				t.Fatalf("no span %q in the caller's trace %s with parent %s; exported: %v", name, chain.trace, parent, byName[name])
			}
			parent = found.id
		}
	}
}

// TestNewObservability_badEndpoint: an OTLP endpoint the exporter cannot
// use as given, one without a scheme (it would post to https:///v1/traces)
// or of another scheme (read as https), or a protocol other than OTLP/HTTP
// with protobuf, is refused at start naming the variable, not dropped
// span by span at run time.
func TestNewObservability_badEndpoint(t *testing.T) {
	for _, vars := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://collector:4318"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "collector:4318/v1/traces"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"},
	} {
		o, err := newObservability(context.Background(), env(vars))
		if err == nil {
			o.close()
			t.Errorf("newObservability with %q succeeded, want an error", vars)
			continue
		}
		named := false
		for k := range vars {
			named = named || strings.Contains(err.Error(), k)
		}
		if !named {
			t.Errorf("newObservability with %q = %v, want an error naming the variable", vars, err)
		}
	}
	for _, vars := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector/v1/traces", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"},
		{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, // no endpoint: no traces
	} {
		o, err := newObservability(context.Background(), env(vars))
		if err != nil {
			t.Errorf("newObservability with %q = %v, want no error", vars, err)
			continue
		}
		o.close()
	}
}
