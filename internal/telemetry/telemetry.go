// Package telemetry holds what the instrumented packages share about
// OpenTelemetry: the instrumentation scope, the attribute keys of vouch's
// own metrics and spans, and the bridge between OpenTelemetry spans and the
// W3C trace id the project carries in a context (package traceparent).
//
// It depends on the OpenTelemetry API only. A host picks the SDK and the
// exporters; with none, the global providers are no-ops and every
// instrument reports itself disabled, which the callers check before
// building attributes.
package telemetry

import (
	"context"
	"crypto/rand"
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/vouchkit/vouch/internal/release"
	"github.com/vouchkit/vouch/internal/traceparent"
)

// ScopePrefix starts the instrumentation scope name of every package:
// the package's import path.
const ScopePrefix = "github.com/vouchkit/vouch/"

// Attribute keys of vouch's own metrics and spans. HTTP attributes use
// the semantic conventions' keys (package semconv).
const (
	// Tier is the router tier of a run or call (fast, safe, oracle,
	// balanced), or the trust tier of a trust call (adaptive too).
	Tier = attribute.Key("vouch.tier")
	// Mode is the trust call's mode (delegation, validation, arbitration).
	Mode = attribute.Key("vouch.mode")
	// Status is the trust call's status (VERIFIED, RETRY, ...).
	Status = attribute.Key("vouch.status")
	// Session is a router session id.
	Session = attribute.Key("vouch.session.id")
	// Pool is the worker pool of a session.
	Pool = attribute.Key("vouch.session.pool")
	// Replica is the index of a replica in its call.
	Replica = attribute.Key("vouch.replica")
	// Replicas is how many replicas a call runs.
	Replicas = attribute.Key("vouch.replicas")
	// TaskID is the task id of a run.
	TaskID = attribute.Key("vouch.task.id")
	// Label is a run's label (VALID, OK, ERROR, TIMEOUT, CANCELLED, ...).
	Label = attribute.Key("vouch.run.label")
	// Outcome is a run's outcome: answered, failed or cancelled.
	Outcome = attribute.Key("vouch.run.outcome")
	// LatencyMS is a run's latency in milliseconds.
	LatencyMS = attribute.Key("vouch.run.latency_ms")
	// Agreement is a consensus call's agreement.
	Agreement = attribute.Key("vouch.consensus.agreement")
	// Confidence is a consensus call's confidence.
	Confidence = attribute.Key("vouch.consensus.confidence")
	// Route is the router route a trust step called ("/api/v3/validate").
	Route = attribute.Key("vouch.route")
	// Variant is how an HTTP call is admitted: normal, trial, x402 or
	// public.
	Variant = attribute.Key("vouch.variant")
	// Decision is the answer of a trial limit or an idempotency check.
	Decision = attribute.Key("vouch.decision")
	// PaymentResult is what became of a payment step: valid or invalid
	// (verify), success or failure (settle), or refused.
	PaymentResult = attribute.Key("vouch.payment.result")
	// PaymentReason is why a payment was refused or failed.
	PaymentReason = attribute.Key("vouch.payment.reason")
	// Network is the x402 network of a payment.
	Network = attribute.Key("vouch.payment.network")
	// ReceiptMode is a receipt's delivery (inline or detached).
	ReceiptMode = attribute.Key("vouch.receipt.mode")
	// Signed tells a signed receipt from an unsigned one.
	Signed = attribute.Key("vouch.receipt.signed")
	// ReceiptID is a receipt's id.
	ReceiptID = attribute.Key("vouch.receipt.id")
)

// SchemaURL is the schema of the semantic conventions whose names the
// packages use (semconv v1.43.0), which their instrumentation scopes
// name, so that no scope has an empty schema_url.
const SchemaURL = semconv.SchemaURL

// Tracer returns the tracer of package pkg ("router", "x402") from tp, or
// from the global provider when tp is nil, with the instrumentation
// scope's version and [SchemaURL]; opts come after, so a package whose
// attributes are those of another semantic conventions release names
// that release's schema.
func Tracer(tp trace.TracerProvider, pkg string, opts ...trace.TracerOption) trace.Tracer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(ScopePrefix+pkg, append([]trace.TracerOption{trace.WithInstrumentationVersion(release.Version),
		trace.WithSchemaURL(SchemaURL)}, opts...)...)
}

// Meter returns the meter of package pkg from mp, or from the global
// provider when mp is nil, as [Tracer] names its scope.
func Meter(mp metric.MeterProvider, pkg string, opts ...metric.MeterOption) metric.Meter {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	return mp.Meter(ScopePrefix+pkg, append([]metric.MeterOption{metric.WithInstrumentationVersion(release.Version),
		metric.WithSchemaURL(SchemaURL)}, opts...)...)
}

// Off reports whether tp and mp are both the API's no-op providers
// (go.opentelemetry.io/otel/trace/noop, metric/noop): the host asks for
// no telemetry at all, and the instrumented types then skip their hooks
// entirely instead of calling the no-op tracer.
func Off(tp trace.TracerProvider, mp metric.MeterProvider) bool {
	_, noTraces := tp.(tracenoop.TracerProvider)
	_, noMetrics := mp.(metricnoop.MeterProvider)
	return noTraces && noMetrics
}

// Handle passes an error of instrument construction to the global error
// handler, as the OpenTelemetry API asks; the instrument returned with
// the error is still usable.
func Handle(err error) {
	if err != nil {
		otel.Handle(err)
	}
}

// Start starts a span named name with opts; a caller on a hot path
// passes a slice it made once (opts...), which costs no allocation. The
// span's parent is the span in ctx; when ctx holds none but carries a W3C
// trace id (traceparent.With), the parent is a remote span of that trace,
// so that the new span joins the trace the project already propagates:
// the span a request's traceparent named, with its flags, when the id came
// with it (traceparent.WithParent). When the new span is recording and
// its trace id is not the one ctx carries, the returned context carries
// the span's (the span is then a root the library started), so that what
// ctx's trace id reaches (traceparent headers, receipts) names the span's
// trace.
//
// Start takes no attributes: callers set them when the span is recording,
// so that a disabled tracer costs no attribute building (samplers
// therefore decide without them).
func Start(ctx context.Context, tr trace.Tracer, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		if p, ok := traceparent.ParentFrom(ctx); ok {
			ctx = trace.ContextWithRemoteSpanContext(ctx, remoteOf(p, p.State))
		} else if id := traceparent.From(ctx); id != "" {
			if tid, err := trace.TraceIDFromHex(id); err == nil {
				ctx = trace.ContextWithRemoteSpanContext(ctx, remoteParent(tid))
			}
		}
	}
	ctx, span := tr.Start(ctx, name, opts...)
	if span.IsRecording() {
		if id := span.SpanContext().TraceID().String(); traceparent.From(ctx) != id {
			ctx = traceparent.With(ctx, id)
		}
	}
	return ctx, span
}

// remoteParent returns a sampled remote span context of trace tid with a
// random span id: the parent of a span whose trace id arrived without the
// span that sent it (router.WithTraceID, an exam's own trace), which no
// caller flagged unsampled: the trace id is there to be followed.
func remoteParent(tid trace.TraceID) trace.SpanContext {
	var sid trace.SpanID
	for !sid.IsValid() {
		rand.Read(sid[:]) // never fails (crypto/rand, Go 1.24+)
	}
	return trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true,
	})
}

// remoteOf returns the remote span context of p, a decoded
// traceparent, with the trace state of tracestate, the request's
// tracestate header ("" for none; an invalid one is ignored, as W3C Trace
// Context asks): p's ids and its flags, sampled and random trace id as p
// sets them.
func remoteOf(p traceparent.Parent, tracestate string) trace.SpanContext {
	var cfg trace.SpanContextConfig
	cfg.TraceID, _ = trace.TraceIDFromHex(p.TraceID) // Decode checked both
	cfg.SpanID, _ = trace.SpanIDFromHex(p.ParentID)
	cfg.TraceFlags = trace.TraceFlags(p.Flags)
	cfg.TraceState, _ = trace.ParseTraceState(tracestate)
	cfg.Remote = true
	return trace.NewSpanContext(cfg)
}

// TraceContext is the W3C Trace Context propagator of
// go.opentelemetry.io/otel/propagation whose Extract decodes traceparent
// with package traceparent, the decoder of the trace id the project
// carries, so that the span parent and that trace id always come from the
// same reading of a header. (OpenTelemetry's own refuses a version 00
// value that sets a reserved flag bit; W3C Trace Context has the bit
// ignored.)
type TraceContext struct{ propagation.TraceContext }

var _ propagation.TextMapPropagator = TraceContext{}

// Extract returns ctx with the remote span context that carrier's
// traceparent and tracestate name, or ctx itself when its traceparent is
// missing or invalid.
func (TraceContext) Extract(ctx context.Context, carrier propagation.TextMapCarrier) context.Context {
	p, ok := traceparent.Decode(carrier.Get(traceparent.Header))
	if !ok {
		return ctx
	}
	return trace.ContextWithRemoteSpanContext(ctx, remoteOf(p, carrier.Get(tracestateHeader)))
}

// tracestateHeader is the name of the W3C trace context's tracestate
// header.
const tracestateHeader = "tracestate"

// Traceparent returns the value of a traceparent header for a request
// made in trace traceID: with the span id and flags of ctx's span when
// that span is in the trace, so that the receiving side's span is its
// child; else, when the request ctx serves came with a traceparent in the
// trace (traceparent.WithParent) and the library made no span of its own
// (telemetry off), that traceparent as it came, its parent id and flags,
// as a vendor that records nothing passes it on; and with a fresh span
// id, sampled, otherwise.
func Traceparent(ctx context.Context, traceID string) string {
	sc := trace.SpanContextFromContext(ctx)
	if sc.IsValid() && sc.TraceID().String() == traceID {
		return traceparent.Parent{TraceID: traceID, ParentID: sc.SpanID().String(), Flags: byte(sc.TraceFlags())}.String()
	}
	if p, ok := traceparent.ParentFrom(ctx); ok && p.TraceID == traceID {
		return p.String()
	}
	return traceparent.Format(traceID)
}

// Outgoing returns the traceparent header of a request sent under ctx:
// in ctx's W3C trace id (traceparent.With), else in the trace of ctx's
// span, so that a caller who traces with OpenTelemetry alone is followed
// too; the span is the parent when it is in that trace (see
// [Traceparent]). It returns "" when ctx carries neither.
func Outgoing(ctx context.Context) string {
	id := traceparent.From(ctx)
	if !traceparent.Valid(id) {
		sc := trace.SpanContextFromContext(ctx)
		if !sc.IsValid() {
			return ""
		}
		id = sc.TraceID().String()
	}
	return Traceparent(ctx, id)
}

// OutgoingState returns the tracestate header to send beside the
// traceparent [Outgoing] returns for ctx, so that the state a request
// received goes on with its trace, as W3C Trace Context asks: the trace
// state of ctx's span when that span is the traceparent's parent (in the
// trace it names); else the tracestate that came with the request's
// traceparent when that traceparent goes on as it came (see
// [Traceparent]), unless it is invalid; "" otherwise.
func OutgoingState(ctx context.Context) string {
	id := traceparent.From(ctx)
	sc := trace.SpanContextFromContext(ctx)
	if sc.IsValid() && (!traceparent.Valid(id) || id == sc.TraceID().String()) {
		return sc.TraceState().String()
	}
	if p, ok := traceparent.ParentFrom(ctx); ok && p.TraceID == id {
		ts, err := trace.ParseTraceState(p.State)
		if err != nil {
			return "" // an invalid tracestate is not passed on
		}
		return ts.String()
	}
	return ""
}

// SetOutgoing sets on h the traceparent header [Outgoing] returns for ctx,
// with the tracestate [OutgoingState] returns; it sets neither when ctx
// carries no trace.
func SetOutgoing(ctx context.Context, h http.Header) {
	if tp := Outgoing(ctx); tp != "" {
		h.Set(traceparent.Header, tp)
		if ts := OutgoingState(ctx); ts != "" {
			h.Set(tracestateHeader, ts)
		}
	}
}

// Present returns attrs without the attributes whose value is an empty
// string: an attribute without a value is left out, never recorded as
// "" (an empty Prometheus label, an empty span attribute). It filters
// attrs in place.
func Present(attrs ...attribute.KeyValue) []attribute.KeyValue {
	out := attrs[:0]
	for _, kv := range attrs {
		if kv.Value.Type() != attribute.STRING || kv.Value.AsString() != "" {
			out = append(out, kv)
		}
	}
	return out
}

// Kind returns the options of a span of kind k, to be made once and
// passed to Start.
func Kind(k trace.SpanKind) []trace.SpanStartOption {
	return []trace.SpanStartOption{trace.WithSpanKind(k)}
}

// Fail marks span as failed with err, when err is not nil.
func Fail(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
}
