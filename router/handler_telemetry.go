package router

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/telemetry"
)

// WithHandlerTelemetry sets the OpenTelemetry providers of the Handler's
// spans and metrics; a nil provider, the default, means the global one,
// which does nothing until the host installs an SDK.
//
// Each request gets a server span named by its method and route, a child
// of the span its traceparent header names; the Service runs under it,
// so the [Engine]'s spans are its children. Metrics:
// http.server.request.duration (semantic conventions), vouch.calls by
// route, variant and status, and the trial limit's and the idempotency
// check's decisions. docs/OBSERVABILITY.md lists every name, unit and
// attribute.
func WithHandlerTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) HandlerOption {
	return func(h *Handler) { h.cfg.TracerProvider, h.cfg.MeterProvider = tp, mp }
}

// setTraceparent sets the traceparent header of an outgoing request made
// under ctx: ctx's trace id, else its span's trace, with ctx's span as the
// parent when it is in that trace, and then its tracestate too. It sets
// nothing when ctx carries no trace.
func setTraceparent(ctx context.Context, h http.Header) {
	telemetry.SetOutgoing(ctx, h)
}
