package trustmcp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

// tracedServer returns an MCP server whose tools, trust service and
// router record into rec, with Telemetry added unless bare.
func tracedServer(t *testing.T, rec *telemetrytest.Recorder, bare ...bool) *mcp.Server {
	t.Helper()
	var ss []router.Session
	for i := 1; i <= 3; i++ {
		ss = append(ss, router.Session{ID: router.SessionID(i), Pool: fmt.Sprint("pool", i), Worker: routertest.Arithmetic()})
	}
	engine, err := router.NewEngine(ss, router.WithEngineTelemetry(rec.TracerProvider, rec.MeterProvider))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(engine, trust.WithTelemetry(rec.TracerProvider, rec.MeterProvider))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := trustmcp.NewServer(trustmcp.Config{Caller: svc, Router: engine})
	if err != nil {
		t.Fatal(err)
	}
	if len(bare) == 0 {
		srv.AddReceivingMiddleware(trustmcp.Telemetry(rec.TracerProvider, rec.MeterProvider))
	}
	return srv
}

// spanNamed returns the one span named name.
func spanNamed(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %q, want 1", len(found), name)
	}
	return found[0]
}

func attributes(s tracetest.SpanStub) map[string]string {
	out := map[string]string{}
	for _, kv := range s.Attributes {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}

// checkTrace checks that every span is in trace, and that none has an
// attribute set to an empty string or a parent that is not one of the
// spans, except the caller's span root.
func checkTrace(t *testing.T, spans tracetest.SpanStubs, trace, root string) {
	t.Helper()
	ids := map[string]bool{root: true}
	for _, s := range spans {
		ids[s.SpanContext.SpanID().String()] = true
	}
	for _, s := range spans {
		if got := s.SpanContext.TraceID().String(); got != trace {
			t.Errorf("span %s in trace %s, want %s", s.Name, got, trace)
		}
		if p := s.Parent.SpanID().String(); !ids[p] {
			t.Errorf("span %s has parent %s, which is neither the caller's span nor one of the trace's", s.Name, p)
		}
		for _, kv := range s.Attributes {
			if kv.Value.String() == "" {
				t.Errorf("span %s: attribute %s is empty", s.Name, kv.Key)
			}
		}
	}
}

// TestTelemetry_http calls a tool over Streamable HTTP behind
// httpapi.Instrument with a traceparent header: one trace runs from the
// caller's span through the HTTP server span, the tools/call span and the
// trust call, each the child of the one before; and the request is
// counted in the HTTP server metrics.
func TestTelemetry_http(t *testing.T) {
	rec := telemetrytest.New(t)
	srv := tracedServer(t, rec)
	mux := http.NewServeMux()
	mux.Handle("/mcp", httpapi.Instrument(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}), rec.TracerProvider, rec.MeterProvider, "normal"))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	callWithTraceparent(t, hs.URL+"/mcp")

	spans := rec.Spans.GetSpans()
	checkTrace(t, spans, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
	httpSpan := spanNamed(t, spans, "POST /mcp")
	call := spanNamed(t, spans, "tools/call validate_claim")
	trustCall := spanNamed(t, spans, "trust.call")
	if httpSpan.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("POST /mcp has parent %s, want the traceparent's span", httpSpan.Parent.SpanID())
	}
	if call.Parent.SpanID() != httpSpan.SpanContext.SpanID() || call.SpanKind.String() != "server" {
		t.Errorf("tools/call has parent %s, kind %s; want the HTTP span %s, server", call.Parent.SpanID(), call.SpanKind, httpSpan.SpanContext.SpanID())
	}
	if trustCall.Parent.SpanID() != call.SpanContext.SpanID() {
		t.Errorf("trust.call has parent %s, want the tools/call span %s", trustCall.Parent.SpanID(), call.SpanContext.SpanID())
	}
	attrs := attributes(call)
	for k, v := range map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "validate_claim",
		"gen_ai.operation.name": "execute_tool", "network.transport": "tcp"} {
		if attrs[k] != v {
			t.Errorf("tools/call %s = %q, want %q (all: %v)", k, attrs[k], v, attrs)
		}
	}

	points := rec.Points(t)
	if n := points["vouch.calls"]["http.response.status_code=200,http.route=/mcp,vouch.variant=normal"]; n != 1 {
		t.Errorf("vouch.calls = %v, want the /mcp request", points["vouch.calls"])
	}
	if n := points["mcp.server.operation.duration"]["gen_ai.operation.name=execute_tool,gen_ai.tool.name=validate_claim,mcp.method.name=tools/call,network.protocol.name=http,network.transport=tcp"]; n != 1 {
		t.Errorf("mcp.server.operation.duration = %v, want one validate_claim call", points["mcp.server.operation.duration"])
	}
}

// TestTelemetry_meta calls tools over in-memory transports (as over stdio)
// with the caller's trace context in params._meta, as the MCP semantic
// conventions propagate it: the tools/call span is the child of that
// span, and the trust call its child; a made-up tool name is recorded as
// _OTHER; a tool error sets error.type.
func TestTelemetry_meta(t *testing.T) {
	rec := telemetrytest.New(t, sdktrace.WithSampler(sdktrace.AlwaysSample()))
	cs := connect(t, tracedServer(t, rec))
	meta := mcp.Meta{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Meta: meta, Name: "validate_claim",
		Arguments: map[string]any{"claimed_result": "17 * 3 = 51", "policy": "fast"}}); err != nil {
		t.Fatal(err)
	}
	spans := rec.Spans.GetSpans()
	checkTrace(t, spans, "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
	call := spanNamed(t, spans, "tools/call validate_claim")
	if call.Parent.SpanID().String() != "b7ad6b7169203331" || !call.Parent.IsRemote() {
		t.Errorf("tools/call has parent %s, want the _meta traceparent's span", call.Parent.SpanID())
	}
	if trustCall := spanNamed(t, spans, "trust.call"); trustCall.Parent.SpanID() != call.SpanContext.SpanID() {
		t.Errorf("trust.call has parent %s, want the tools/call span", trustCall.Parent.SpanID())
	}
	if got := attributes(call)["network.transport"]; got != "pipe" {
		t.Errorf("network.transport = %q, want pipe", got)
	}

	rec.Spans.Reset()
	_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "validate_claim", Arguments: map[string]any{"policy": "cheap"}})
	if err != nil || !res.IsError {
		t.Fatalf("a bad argument = %v, %v; want a tool error", res, err)
	}
	spans = rec.Spans.GetSpans()
	other := spanNamed(t, spans, "tools/call _OTHER")
	if attributes(other)["error.type"] == "" {
		t.Errorf("the call of a made-up tool has no error.type: %v", attributes(other))
	}
	if got := attributes(spanNamed(t, spans, "tools/call validate_claim"))["error.type"]; got != "tool_error" {
		t.Errorf("a tool error has error.type %q, want tool_error", got)
	}
}

// callWithTraceparent calls validate_claim at url over Streamable HTTP
// with a traceparent header naming span 00f067aa0ba902b7 of trace
// 4bf92f3577b34da6a3ce929d0e0e4736.
func callWithTraceparent(t *testing.T, url string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"validate_claim","arguments":{"claimed_result":"17 * 3 = 51","policy":"fast"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// TestCallerContext_headerParent serves the tools over Streamable HTTP
// without Telemetry: the trust call's span is still the child of the span
// the request's traceparent names, never of a span made up for its trace.
func TestCallerContext_headerParent(t *testing.T) {
	rec := telemetrytest.New(t)
	srv := tracedServer(t, rec, true)
	hs := statelessHTTP(t, srv)
	callWithTraceparent(t, hs.URL)
	spans := rec.Spans.GetSpans()
	checkTrace(t, spans, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
	if call := spanNamed(t, spans, "trust.call"); call.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("trust.call has parent %s, want the traceparent's span 00f067aa0ba902b7", call.Parent.SpanID())
	}
}
