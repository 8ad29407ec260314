package trustmcp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
)

// TestTelemetry_statefulSession calls a tool twice in one stateful
// Streamable HTTP session behind httpapi.Instrument, each request with
// a traceparent of its own trace: each tools/call span, and the trust
// call under it, is in the trace of the request that carried the call,
// not in that of the request that opened the session.
func TestTelemetry_statefulSession(t *testing.T) {
	rec := telemetrytest.New(t)
	srv := tracedServer(t, rec)
	mux := http.NewServeMux()
	mux.Handle("/mcp", httpapi.Instrument(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{JSONResponse: true}), rec.TracerProvider, rec.MeterProvider, "normal"))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)

	session := ""
	post := func(body, trace string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		req.Header.Set("traceparent", "00-"+trace+"-00f067aa0ba902b7-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("%s: status %d: %s", body, resp.StatusCode, data)
		}
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			session = id
		}
	}
	const opened = "11111111111111111111111111111111"
	post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, opened)
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, opened)
	calls := []string{"22222222222222222222222222222222", "33333333333333333333333333333333"}
	for i, trace := range calls {
		post(`{"jsonrpc":"2.0","id":`+string(rune('2'+i))+`,"method":"tools/call","params":{"name":"validate_claim","arguments":{"claimed_result":"17 * 3 = 51","policy":"fast"}}}`, trace)
	}
	// Close the session, so that its connection ends with the test.
	del, _ := http.NewRequest(http.MethodDelete, hs.URL+"/mcp", nil)
	del.Header.Set("Mcp-Session-Id", session)
	if resp, err := http.DefaultClient.Do(del); err == nil {
		resp.Body.Close()
	}
	var got []string
	for _, s := range rec.Spans.GetSpans() {
		if s.Name == "tools/call validate_claim" {
			got = append(got, s.SpanContext.TraceID().String())
		}
	}
	if diff := cmp.Diff(calls, got); diff != "" {
		t.Errorf("the traces of the tools/call spans (-each request's +got):\n%s", diff)
	}
}
