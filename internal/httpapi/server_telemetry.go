package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/httpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/telemetry"
)

// serverTelemetry holds a Server's tracer and instruments. A nil
// *serverTelemetry records nothing.
type serverTelemetry struct {
	tracer   trace.Tracer
	server   []trace.SpanStartOption // of a span of kind server
	duration httpconv.ServerRequestDuration
	calls    metric.Int64Counter
	trials   metric.Int64Counter
	idem     metric.Int64Counter
	variants map[string]string // endpoint pattern → variant
}

func newServerTelemetry(cfg *Config) *serverTelemetry {
	if telemetry.Off(cfg.TracerProvider, cfg.MeterProvider) {
		return nil
	}
	m := telemetry.Meter(cfg.MeterProvider, "internal/httpapi")
	t := &serverTelemetry{
		tracer:   telemetry.Tracer(cfg.TracerProvider, "internal/httpapi"),
		server:   telemetry.Kind(trace.SpanKindServer),
		variants: map[string]string{},
	}
	var err error
	t.duration, err = httpconv.NewServerRequestDuration(m)
	telemetry.Handle(err)
	t.calls, err = m.Int64Counter("vouch.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Requests served, by route, variant and status."))
	telemetry.Handle(err)
	t.trials, err = m.Int64Counter("vouch.trial.decisions", metric.WithUnit("{decision}"),
		metric.WithDescription("Trial rate limit decisions: allowed, limited or error."))
	telemetry.Handle(err)
	t.idem, err = m.Int64Counter("vouch.idempotency.decisions", metric.WithUnit("{decision}"),
		metric.WithDescription("Requests with an Idempotency-Key: executed, replayed or conflict."))
	telemetry.Handle(err)
	for _, e := range cfg.Endpoints {
		t.variants[e.Method+" "+e.Path] = variantOf(e.Access)
	}
	return t
}

// variantOf names an access kind as the router names its variants.
func variantOf(a Access) string {
	switch a {
	case Key:
		return "normal"
	case Trial:
		return "trial"
	case Paid:
		return "x402"
	}
	return "public"
}

// served is a request being served, as the telemetry follows it.
type served struct {
	span  trace.Span
	began time.Time
}

// start starts the server span of r, a child of the span its traceparent
// header names.
func (t *serverTelemetry) start(ctx context.Context, r *http.Request) (context.Context, served) {
	if t == nil {
		return ctx, served{}
	}
	if r.Header.Get("traceparent") != "" {
		ctx = propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	ctx, span := telemetry.Start(ctx, t.tracer, r.Method, t.server...)
	if span.IsRecording() {
		span.SetAttributes(semconv.HTTPRequestMethodKey.String(r.Method))
	}
	return ctx, served{span: span, began: time.Now()}
}

// end ends the span of r, answered with status, and records its duration
// and its call by route, variant and status. It runs after the mux, which
// set r.Pattern.
func (t *serverTelemetry) end(ctx context.Context, sv served, r *http.Request, status int) {
	if t == nil {
		return
	}
	route := r.Pattern
	if i := strings.IndexByte(route, ' '); i >= 0 {
		route = route[i+1:]
	}
	if route == "/" { // the catch-all 404
		route = ""
	}
	if sv.span.IsRecording() {
		if route != "" {
			sv.span.SetName(r.Method + " " + route)
			sv.span.SetAttributes(semconv.HTTPRouteKey.String(route))
		}
		sv.span.SetAttributes(semconv.HTTPResponseStatusCodeKey.Int(status))
		if status >= 500 {
			sv.span.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(status)))
			sv.span.SetStatus(codes.Error, http.StatusText(status))
		}
	}
	sv.span.End()
	if t.duration.Enabled(ctx) {
		attrs := make([]attribute.KeyValue, 0, 5)
		attrs = append(attrs, semconv.HTTPRequestMethodKey.String(r.Method), semconv.HTTPResponseStatusCodeKey.Int(status))
		attrs = append(attrs, semconv.URLSchemeKey.String(scheme(r)))
		if route != "" {
			attrs = append(attrs, semconv.HTTPRouteKey.String(route))
		}
		if status >= 500 {
			attrs = append(attrs, semconv.ErrorTypeKey.String(strconv.Itoa(status)))
		}
		t.duration.Inst().Record(ctx, time.Since(sv.began).Seconds(), metric.WithAttributes(attrs...))
	}
	if t.calls.Enabled(ctx) {
		variant, ok := t.variants[r.Pattern]
		if !ok {
			variant = "none"
		}
		t.calls.Add(ctx, 1, metric.WithAttributes(semconv.HTTPRouteKey.String(route),
			telemetry.Variant.String(variant), semconv.HTTPResponseStatusCodeKey.Int(status)))
	}
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// trial counts a trial limit decision.
func (t *serverTelemetry) trial(ctx context.Context, ok bool, err error) {
	if t == nil || !t.trials.Enabled(ctx) {
		return
	}
	d := "allowed"
	switch {
	case err != nil:
		d = "error"
	case !ok:
		d = "limited"
	}
	t.trials.Add(ctx, 1, metric.WithAttributes(telemetry.Decision.String(d)))
}

// idempotency counts what a request with an Idempotency-Key came to:
// executed, replayed or conflict.
func (t *serverTelemetry) idempotency(ctx context.Context, decision string) {
	if t != nil && t.idem.Enabled(ctx) {
		t.idem.Add(ctx, 1, metric.WithAttributes(telemetry.Decision.String(decision)))
	}
}
