package trust

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/vouchkit/vouch/internal/telemetry"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
)

// WithTelemetry sets the OpenTelemetry providers of the service's spans
// and metrics; a nil provider, the default, means the global one, which
// does nothing until the host installs an SDK. The no-op providers of the
// API (trace/noop and metric/noop) together turn the instrumentation off.
//
// Each call gets a span "trust.call", a child of the span in its context,
// or of the W3C trace id it carries (router.WithTraceID, or the
// traceparent header the Handler read); each router call it makes gets a
// child span "trust.router_call", the parent of the router's own spans.
// The response's trace id, and the router_trace_ids of its receipt, are
// the call span's trace id whenever the span is recorded. Metrics: calls
// by mode, tier and status (a call that passed the request's validation
// and ended in an error by error.type:
// its problem code, "canceled", "timeout" or "internal"), and the runs
// each answered call took by tier. An
// exam's call (see Service.FeedbackVerdict) carries the attribute
// vouch.trust.exam=true on its span and both metrics, so that a host's
// dashboards can tell its own exams from its callers' calls.
// Issuing a receipt gets a span "receipt.issue" and counts in
// vouch.receipts.issued; when the receipt store keeps a transparency log
// (a receipt.LogReader), storing the receipt, which appends it to the
// log, gets a child span "receipt.log_append" naming its leaf index.
// docs/OBSERVABILITY.md lists every name, unit and attribute.
func WithTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) Option {
	return func(s *Service) error {
		s.tel = newServiceTelemetry(tp, mp)
		return nil
	}
}

// WithHandlerTelemetry sets the OpenTelemetry providers of the Handler's
// server spans and HTTP metrics (http.server.request.duration and the
// others router.WithHandlerTelemetry lists); nil means the global one.
func WithHandlerTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) HandlerOption {
	return func(h *Handler) { h.cfg.TracerProvider, h.cfg.MeterProvider = tp, mp }
}

// serviceTelemetry holds a Service's tracer and instruments. A nil
// *serviceTelemetry records nothing.
type serviceTelemetry struct {
	tracer   trace.Tracer
	calls    metric.Int64Counter
	runs     metric.Int64Histogram
	receipts metric.Int64Counter
}

func newServiceTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) *serviceTelemetry {
	if telemetry.Off(tp, mp) {
		return nil
	}
	m := telemetry.Meter(mp, "trust")
	t := &serviceTelemetry{tracer: telemetry.Tracer(tp, "trust")}
	var err error
	t.calls, err = m.Int64Counter("vouch.trust.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Trust calls, by mode, tier and status; a call that ended in an error by error.type instead of status."))
	telemetry.Handle(err)
	t.runs, err = m.Int64Histogram("vouch.trust.runs", metric.WithUnit("{run}"),
		metric.WithDescription("Replica runs one trust call took, all its router calls together, by tier."),
		metric.WithExplicitBucketBoundaries(1, 3, 5, 8, 9, 13))
	telemetry.Handle(err)
	t.receipts, err = m.Int64Counter("vouch.receipts.issued", metric.WithUnit("{receipt}"),
		metric.WithDescription("Receipts issued and stored, by delivery and whether signed."))
	telemetry.Handle(err)
	return t
}

// startCall starts the span of a trust call.
func (t *serviceTelemetry) startCall(ctx context.Context, req *Request) (context.Context, trace.Span) {
	if t == nil {
		return ctx, tracenoop.Span{} // never the span of ctx, which its caller ends
	}
	ctx, span := telemetry.Start(ctx, t.tracer, "trust.call")
	if span.IsRecording() {
		span.SetAttributes(telemetry.Mode.String(string(req.Mode)), telemetry.Tier.String(string(req.Policy)))
		if isExam(ctx) {
			span.SetAttributes(examAttr.Bool(true))
		}
	}
	return ctx, span
}

// answered records a call answered with resp: its status on span and its
// count, and the runs it took.
func (t *serviceTelemetry) answered(ctx context.Context, span trace.Span, req *Request, resp *Response) {
	if t == nil {
		return
	}
	if span.IsRecording() {
		span.SetAttributes(telemetry.Status.String(string(resp.Status)))
	}
	if !t.calls.Enabled(ctx) && !t.runs.Enabled(ctx) {
		return
	}
	runs := 0
	for _, st := range resp.Evidence.Steps {
		runs += st.Replicas
	}
	attrs := []attribute.KeyValue{telemetry.Mode.String(string(req.Mode)), telemetry.Tier.String(string(req.Policy))}
	if isExam(ctx) {
		attrs = append(attrs, examAttr.Bool(true))
	}
	t.runs.Record(ctx, int64(runs), metric.WithAttributes(attrs...))
	t.calls.Add(ctx, 1, metric.WithAttributes(append(attrs, telemetry.Status.String(string(resp.Status)))...))
}

// failed counts a call of req that ended in err, not answered: by
// error.type, err's problem code ("unavailable", "all_replicas_failed",
// ...), "canceled" when its caller left, "timeout" when its deadline
// passed, and "internal" for any other error, and without a status.
func (t *serviceTelemetry) failed(ctx context.Context, req *Request, err error) {
	if t == nil || req == nil || !t.calls.Enabled(ctx) {
		return
	}
	attrs := []attribute.KeyValue{telemetry.Mode.String(string(req.Mode)), telemetry.Tier.String(string(req.Policy)), semconv.ErrorTypeKey.String(errorType(err))}
	if isExam(ctx) {
		attrs = append(attrs, examAttr.Bool(true))
	}
	t.calls.Add(ctx, 1, metric.WithAttributes(telemetry.Present(attrs...)...))
}

// errorType names err for error.type, from a bounded set: a problem
// code the problem package defines, "_OTHER" for any other code (a
// remote router's, which may name a new one in each answer), "canceled",
// "timeout" or "internal".
func errorType(err error) string {
	var p *problem.Details
	switch {
	case errors.As(err, &p) && knownCode(p.Code):
		return string(p.Code)
	case p != nil && p.Code != "":
		return "_OTHER"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "internal"
}

// endSpan marks span as failed when err is not nil, and ends it.
func endSpan(span trace.Span, err error) {
	telemetry.Fail(span, err)
	span.End()
}

// examAttr marks the span and metrics of an exam's call.
const examAttr = attribute.Key("vouch.trust.exam")

// startStep starts the span of the router call of one rung of the plan.
func (t *serviceTelemetry) startStep(ctx context.Context, replicas int, tier router.Tier) (context.Context, trace.Span) {
	if t == nil {
		return ctx, tracenoop.Span{} // never the span of ctx, which its caller ends
	}
	ctx, span := telemetry.Start(ctx, t.tracer, "trust.router_call")
	if span.IsRecording() {
		span.SetAttributes(telemetry.Replicas.Int(replicas), telemetry.Tier.String(string(tier)))
	}
	return ctx, span
}

// startIssue starts the span of issuing req's receipt. The log append,
// when the store keeps a log, runs under it (see logged).
func (t *serviceTelemetry) startIssue(ctx context.Context, req *Request) (context.Context, trace.Span) {
	if t == nil {
		return ctx, tracenoop.Span{} // never the span of ctx, which its caller ends
	}
	ctx, span := telemetry.Start(ctx, t.tracer, "receipt.issue")
	if span.IsRecording() {
		span.SetAttributes(telemetry.Mode.String(string(req.Mode)), telemetry.ReceiptMode.String(string(req.Receipt.Mode)))
	}
	return ctx, span
}

// issued ends the span of issuing a receipt, iss or the error err, and
// counts the receipt.
func (t *serviceTelemetry) issued(ctx context.Context, span trace.Span, iss *receipt.Issued, err error) {
	if t == nil {
		return
	}
	defer span.End()
	if err != nil {
		telemetry.Fail(span, err)
		return
	}
	signed := iss.Receipt.Signing != nil
	if span.IsRecording() {
		span.SetAttributes(telemetry.ReceiptID.String(iss.Receipt.ReceiptID), telemetry.Signed.Bool(signed))
	}
	if t.receipts.Enabled(ctx) {
		t.receipts.Add(ctx, 1, metric.WithAttributes(
			telemetry.ReceiptMode.String(string(iss.Delivery)), telemetry.Signed.Bool(signed)))
	}
}

// logIndex is the leaf index of a receipt in its store's transparency log.
const logIndex = attribute.Key("vouch.receipt.log_index")

// logged returns is, or a copy of it whose store reports each Put as the
// span "receipt.log_append" when the store keeps a transparency log.
// The caller's Issuer is never changed.
func (t *serviceTelemetry) logged(is *receipt.Issuer) *receipt.Issuer {
	if t == nil || is == nil {
		return is
	}
	if _, ok := is.Store.(receipt.LogReader); !ok {
		return is
	}
	c := *is
	c.Store = &loggedStore{Store: is.Store, tracer: t.tracer}
	return &c
}

// loggedStore is a receipt store that keeps a transparency log, whose Put
// (storing a receipt and appending it to the log, in the store's one
// transaction) runs under a span.
type loggedStore struct {
	receipt.Store
	tracer trace.Tracer
}

// Put stores rec under the span "receipt.log_append". When the span is
// recording, it reads the record back for its leaf index: the Store
// interface's Put does not return it.
func (s *loggedStore) Put(ctx context.Context, rec receipt.Record) error {
	ctx, span := telemetry.Start(ctx, s.tracer, "receipt.log_append")
	defer span.End()
	if err := s.Store.Put(ctx, rec); err != nil {
		telemetry.Fail(span, err)
		return err
	}
	if span.IsRecording() {
		span.SetAttributes(telemetry.ReceiptID.String(rec.ID))
		// Any moment before the expiry finds the record just put.
		if got, err := s.Store.Get(ctx, rec.ID, rec.ExpiresAt.Add(-time.Second)); err == nil && got.LogIndex >= 0 {
			span.SetAttributes(logIndex.Int64(got.LogIndex))
		}
	}
	return nil
}

// knownCode reports whether c is one of the codes the problem package
// defines.
func knownCode(c problem.Code) bool {
	switch c {
	case problem.CodeInvalidRequest, problem.CodeMalformedJSON, problem.CodeUnauthorized,
		problem.CodePaymentRequired, problem.CodeForbidden, problem.CodeNotFound,
		problem.CodeMethodNotAllowed, problem.CodeConflict, problem.CodeBodyTooLarge,
		problem.CodeUnsupportedMediaType, problem.CodeUnprocessable, problem.CodeRateLimited,
		problem.CodeInsufficientSessions, problem.CodeDisagreement, problem.CodeAllReplicasFailed,
		problem.CodeNotDelivered, problem.CodeTimeout, problem.CodeUnavailable,
		problem.CodeX402NotConfigured, problem.CodeUnknownCall, problem.CodeReputationOff,
		problem.CodeInternal:
		return true
	}
	return false
}
