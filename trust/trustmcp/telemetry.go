package trustmcp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/telemetry"
	"github.com/vouchkit/vouch/internal/traceparent"
)

// methodToolsCall is the MCP method of a tool call.
const methodToolsCall = "tools/call"

// Telemetry returns a receiving middleware that gives every tools/call a
// server span named "tools/call <tool>" and records its duration in
// mcp.server.operation.duration, with the attributes of the MCP semantic
// conventions (semconv v1.41.0, the last release that carries them):
// mcp.method.name, gen_ai.tool.name, gen_ai.operation.name
// (execute_tool), mcp.session.id and mcp.protocol.version when known,
// network.transport (tcp over HTTP, pipe otherwise), and error.type when
// the call fails or the tool answers an error.
//
// The span's parent is the caller's: the trace context the client put in
// params._meta (traceparent and tracestate, as the conventions propagate
// it), else the span of the call's context (the HTTP server span of the
// request that carried it, from httpapi.Instrument), else the traceparent
// header of that request. The tools' work (trust.call and the router's
// spans) are its children.
//
// A tool name that is not one of the package's tools is recorded as
// _OTHER, so that a client naming made-up tools makes no time series.
// Add it last with AddReceivingMiddleware, so that it wraps the
// Paywall's spans. With no telemetry (both providers the API's no-op
// ones, or nil and the global ones no-ops) it passes calls through.
func Telemetry(tp trace.TracerProvider, mp metric.MeterProvider) mcp.Middleware {
	t := newToolTelemetry(tp, mp)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		if t == nil {
			return next
		}
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if method != methodToolsCall || !ok || call.Params == nil {
				return next(ctx, method, req)
			}
			return t.serve(ctx, call, func(ctx context.Context) (mcp.Result, error) { return next(ctx, method, req) })
		}
	}
}

type toolTelemetry struct {
	tracer   trace.Tracer
	server   []trace.SpanStartOption
	duration mcpconv.ServerOperationDuration
}

func newToolTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) *toolTelemetry {
	if tp != nil && mp != nil && telemetry.Off(tp, mp) {
		return nil
	}
	t := &toolTelemetry{
		tracer: telemetry.Tracer(tp, "trust/trustmcp", trace.WithSchemaURL(semconv.SchemaURL)),
		server: telemetry.Kind(trace.SpanKindServer),
	}
	var err error
	t.duration, err = mcpconv.NewServerOperationDuration(telemetry.Meter(mp, "trust/trustmcp", metric.WithSchemaURL(semconv.SchemaURL)))
	telemetry.Handle(err)
	return t
}

// serve runs the tool call under its span and records its duration.
func (t *toolTelemetry) serve(ctx context.Context, call *mcp.CallToolRequest, run func(context.Context) (mcp.Result, error)) (mcp.Result, error) {
	began := time.Now()
	tool := knownTool(call.Params.Name)
	ctx = callerParent(ctx, call)
	ctx, span := telemetry.Start(ctx, t.tracer, methodToolsCall+" "+tool, t.server...)
	ctx = context.WithValue(ctx, callSpanKey{}, true)
	attrs := callAttributes(call, tool)
	if span.IsRecording() {
		span.SetAttributes(attrs...)
	}
	res, err := run(ctx)
	var errType string
	switch r, _ := res.(*mcp.CallToolResult); {
	case err != nil:
		errType = "_OTHER"
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			errType = jsonrpcCode(werr.Code)
		}
		telemetry.Fail(span, err)
	case r != nil && r.IsError:
		errType = "tool_error"
		if span.IsRecording() {
			span.SetStatus(codes.Error, "the tool answered an error")
		}
	}
	if errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
		if span.IsRecording() {
			span.SetAttributes(semconv.ErrorTypeKey.String(errType))
		}
	}
	span.End()
	t.duration.Record(ctx, time.Since(began).Seconds(), mcpconv.MethodNameToolsCall, metricAttributes(attrs)...)
	return res, err
}

// callerParent returns ctx with the caller's span as the parent of the
// call's span: params._meta's trace context, else the span ctx has, else
// the HTTP request's traceparent header.
func callerParent(ctx context.Context, call *mcp.CallToolRequest) context.Context {
	prop := telemetry.TraceContext{}
	if meta := call.Params.GetMeta(); meta != nil {
		carrier := propagation.MapCarrier{}
		for _, k := range prop.Fields() {
			if v, ok := meta[k].(string); ok {
				carrier[k] = v
			}
		}
		if withMeta := prop.Extract(ctx, carrier); trace.SpanContextFromContext(withMeta).IsValid() {
			return traceparent.With(withMeta, trace.SpanContextFromContext(withMeta).TraceID().String())
		}
	}
	if call.Extra == nil {
		return ctx
	}
	return requestParent(ctx, call.Extra.Header)
}

// callSpanKey marks a context whose span is the tools/call span of
// Telemetry, which the trust call continues.
type callSpanKey struct{}

// requestParent returns ctx with the span the traceparent header of h,
// the HTTP request that carried the call, names as the parent, unless
// ctx's span is already in that trace (the request's HTTP server span).
// In a stateful session ctx is the session's, whose span is that of the
// request that opened it: the header of the request at hand wins.
func requestParent(ctx context.Context, h http.Header) context.Context {
	if _, ok := traceparent.Of(h); !ok {
		return ctx
	}
	hctx := telemetry.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(h))
	sc := trace.SpanContextFromContext(hctx)
	if !sc.IsValid() || sc.TraceID() == trace.SpanContextFromContext(ctx).TraceID() {
		return ctx
	}
	return traceparent.With(hctx, sc.TraceID().String())
}

// callAttributes returns the span attributes of call, none empty.
func callAttributes(call *mcp.CallToolRequest, tool string) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		semconv.McpMethodNameKey.String(methodToolsCall),
		semconv.GenAIToolName(tool),
		semconv.GenAIOperationNameExecuteTool,
		semconv.NetworkTransportPipe,
	}
	if call.Extra != nil && call.Extra.Header != nil {
		attrs[3] = semconv.NetworkTransportTCP
		attrs = append(attrs, semconv.NetworkProtocolNameKey.String("http"))
	}
	if v := call.ProtocolVersion(); v != "" {
		attrs = append(attrs, semconv.McpProtocolVersion(v))
	}
	if call.Session != nil {
		if id := call.Session.ID(); id != "" {
			attrs = append(attrs, semconv.McpSessionID(id))
		}
	}
	return attrs
}

// metricAttributes keeps the attributes of attrs whose values are bounded:
// the session id, and the protocol version, which a client may name in
// the request's _meta, are left out of the metric (mcp.method.name is
// added by Record).
func metricAttributes(attrs []attribute.KeyValue) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(attrs))
	for _, kv := range attrs {
		if kv.Key != semconv.McpSessionIDKey && kv.Key != semconv.McpMethodNameKey && kv.Key != semconv.McpProtocolVersionKey {
			out = append(out, kv)
		}
	}
	return out
}

// knownTool returns name when it is one of the package's tools, and
// _OTHER otherwise.
func knownTool(name string) string {
	switch name {
	case ToolValidateClaim, ToolDelegateTask, ToolArbitrate, ToolFactcheck, ToolGetReceipt, ToolVerifyReceipt, ToolReportOutcome:
		return name
	}
	return "_OTHER"
}

// jsonrpcCode names a JSON-RPC error code for error.type: the code, for
// the codes JSON-RPC and MCP define, and _OTHER for any other.
func jsonrpcCode(code int64) string {
	if code <= -32000 && code >= -32768 {
		return strconv.FormatInt(code, 10)
	}
	return "_OTHER"
}
