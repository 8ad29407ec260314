package trustmcp_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

// Trace MCP tool calls: each call is a server span "tools/call <tool>",
// here a child of the caller's span named in params._meta, and the trust
// call it makes is its child.
func ExampleTelemetry() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	engine, err := router.NewEngine([]router.Session{{ID: 1, Pool: "a", Worker: routertest.Arithmetic()}})
	if err != nil {
		panic(err)
	}
	svc, err := trust.New(engine, trust.WithTelemetry(tp, nil))
	if err != nil {
		panic(err)
	}
	server, err := trustmcp.NewServer(trustmcp.Config{Caller: svc, Router: engine})
	if err != nil {
		panic(err)
	}
	server.AddReceivingMiddleware(trustmcp.Telemetry(tp, nil)) // last: it wraps the others

	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		panic(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		panic(err)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "validate_claim",
		Meta:      mcp.Meta{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		Arguments: map[string]any{"claimed_result": "17 * 3 = 51", "policy": "fast"}})
	if err != nil {
		panic(err)
	}
	cs.Close()
	ss.Wait()

	for _, s := range spans.GetSpans() {
		if s.Name == "tools/call validate_claim" || s.Name == "trust.call" {
			fmt.Println(s.Name, "in trace", s.SpanContext.TraceID(), "parent is remote:", s.Parent.IsRemote())
		}
	}
	// Output:
	// trust.call in trace 0af7651916cd43dd8448eb211c80319c parent is remote: false
	// tools/call validate_claim in trace 0af7651916cd43dd8448eb211c80319c parent is remote: true
}
