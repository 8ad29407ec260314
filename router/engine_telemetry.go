package router

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/telemetry"
)

// WithEngineTelemetry sets the OpenTelemetry providers of the engine's
// spans and metrics. A nil provider, the default, means the global one
// (otel.GetTracerProvider, otel.GetMeterProvider), which does nothing
// until the host installs an SDK. The no-op providers of the API
// (trace/noop and metric/noop) together turn the instrumentation off.
//
// Spans: "router.consensus" for each version 3 call (and version 1 fact
// check), with one child "router.replica" per replica; "router.replica"
// for the one run of a version 1 or 2 call. A replica's span is started
// only when its call's span is recording, and it is the parent of what
// the worker does with its context. Metrics: runs launched and finished
// by tier and outcome, worker latency and errors by session, and each
// consensus call's agreement and confidence. docs/OBSERVABILITY.md lists
// every name, unit and attribute.
func WithEngineTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) EngineOption {
	return func(e *Engine) error {
		e.tel = newEngineTelemetry(tp, mp)
		return nil
	}
}

// engineTelemetry holds an engine's tracer and instruments. A nil
// *engineTelemetry records nothing.
type engineTelemetry struct {
	tracer     trace.Tracer
	launched   metric.Int64Counter
	runs       metric.Int64Counter
	duration   metric.Float64Histogram
	errors     metric.Int64Counter
	agreement  metric.Float64Histogram
	confidence metric.Float64Histogram
}

// ratioBuckets are the bucket bounds of agreement and confidence, which
// lie in [0, 1]: the fractions 1/5 .. 4/5 of five replicas and 1/3, 2/3
// of three sit on their own bounds.
var ratioBuckets = []float64{0.2, 0.34, 0.4, 0.5, 0.6, 0.67, 0.8, 0.9, 0.99, 1}

func newEngineTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) *engineTelemetry {
	if telemetry.Off(tp, mp) {
		return nil
	}
	m := telemetry.Meter(mp, "router")
	t := &engineTelemetry{tracer: telemetry.Tracer(tp, "router")}
	var err error
	t.launched, err = m.Int64Counter("vouch.router.runs.launched", metric.WithUnit("{run}"),
		metric.WithDescription("Runs the engine started, by tier."))
	telemetry.Handle(err)
	t.runs, err = m.Int64Counter("vouch.router.runs", metric.WithUnit("{run}"),
		metric.WithDescription("Runs the engine finished, by tier, outcome (answered, failed, cancelled) and label."))
	telemetry.Handle(err)
	t.duration, err = m.Float64Histogram("vouch.worker.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of a worker's run, by session."),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120))
	telemetry.Handle(err)
	t.errors, err = m.Int64Counter("vouch.worker.errors", metric.WithUnit("{run}"),
		metric.WithDescription("Runs that count against their session's health (ERROR, or TIMEOUT while the caller waited), by session and label."))
	telemetry.Handle(err)
	t.agreement, err = m.Float64Histogram("vouch.consensus.agreement", metric.WithUnit("1"),
		metric.WithDescription("Agreement of a consensus call: the winning group's share of the votes."),
		metric.WithExplicitBucketBoundaries(ratioBuckets...))
	telemetry.Handle(err)
	t.confidence, err = m.Float64Histogram("vouch.consensus.confidence", metric.WithUnit("1"),
		metric.WithDescription("Confidence of a consensus call."),
		metric.WithExplicitBucketBoundaries(ratioBuckets...))
	telemetry.Handle(err)
	return t
}

// consensus runs a consensus call (see fanOut) in a span of its own,
// and records the call's runs, whatever it ended with, and the agreement
// and confidence of a call that answered. It returns no call with an
// error.
func (e *Engine) consensus(ctx context.Context, first SessionID, c *ConsensusRequest, poolField string, tier Tier, job *Job, timeout time.Duration) (*consensusCall, error) {
	if err := checkTraceID(ctx); err != nil {
		return nil, err
	}
	ctx, span := e.tel.startCall(ctx, job, c.Replicas)
	call, err := e.fanOut(ctx, first, c, poolField, tier, job, timeout)
	e.tel.endCall(ctx, span, tier, call, err)
	if err != nil {
		return nil, err
	}
	return call, nil
}

// startCall starts the span of a consensus call of job on replicas
// sessions.
func (t *engineTelemetry) startCall(ctx context.Context, job *Job, replicas int) (context.Context, trace.Span) {
	if t == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	ctx, span := telemetry.Start(ctx, t.tracer, "router.consensus")
	if span.IsRecording() {
		span.SetAttributes(telemetry.Present(attribute.String("vouch.job.kind", string(job.Kind)), telemetry.Tier.String(string(job.Tier)), telemetry.Replicas.Int(replicas))...)
	}
	return ctx, span
}

// launch counts the replicas runs of job as launched, once their
// sessions are picked and they start.
func (t *engineTelemetry) launch(ctx context.Context, job *Job, replicas int) {
	if t != nil && t.launched.Enabled(ctx) {
		t.launched.Add(ctx, int64(replicas), metric.WithAttributes(telemetry.Present(telemetry.Tier.String(string(job.Tier)))...))
	}
}

// endCall ends a consensus call's span, counts its runs by outcome, and
// records its agreement and confidence when it answered (err is nil).
// call is nil when no replica ran (the call was refused), and holds the
// runs of a call that ran them and failed, with err.
func (t *engineTelemetry) endCall(ctx context.Context, span trace.Span, tier Tier, call *consensusCall, err error) {
	if t == nil {
		return
	}
	defer span.End()
	telemetry.Fail(span, err)
	if call == nil {
		return
	}
	for _, o := range call.outcomes {
		t.finished(ctx, tier, o)
	}
	if err != nil {
		return
	}
	if t.agreement.Enabled(ctx) || t.confidence.Enabled(ctx) {
		set := metric.WithAttributes(telemetry.Present(telemetry.Tier.String(string(tier)))...)
		t.agreement.Record(ctx, call.block.Agreement, set)
		t.confidence.Record(ctx, call.block.Confidence, set)
	}
	if span.IsRecording() {
		span.SetAttributes(telemetry.Agreement.Float64(call.block.Agreement), telemetry.Confidence.Float64(call.block.Confidence))
	}
}

// startReplica starts the span of job's run on s, when root is set (the
// one run of a version 1 or 2 call) or ctx's span (the consensus call's)
// is recording; otherwise the returned span is the non-recording one of
// ctx.
func (t *engineTelemetry) startReplica(ctx context.Context, s *session, job *Job, root bool) (context.Context, trace.Span) {
	if t == nil || !root && !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, trace.SpanFromContext(ctx)
	}
	if root && t.launched.Enabled(ctx) {
		t.launched.Add(ctx, 1, metric.WithAttributes(telemetry.Present(telemetry.Tier.String(string(job.Tier)))...))
	}
	ctx, span := telemetry.Start(ctx, t.tracer, "router.replica")
	if span.IsRecording() {
		span.SetAttributes(telemetry.Present(telemetry.Session.Int64(int64(s.ID)), telemetry.Pool.String(s.Pool), telemetry.Replica.Int(job.Replica), telemetry.TaskID.String(job.TaskID), telemetry.Tier.String(string(job.Tier)))...)
	}
	return ctx, span
}

// endReplica records o, the finished run of job on s whose span is span:
// the worker's latency by session, and the span's label and latency, and
// its error status when the run failed (ERROR or TIMEOUT). For
// a root run (see startReplica) it also counts the run as finished;
// caller is the caller's own context.
func (t *engineTelemetry) endReplica(caller context.Context, span trace.Span, s *session, job *Job, o *outcome, root bool) {
	if t == nil {
		return
	}
	if t.duration.Enabled(caller) {
		t.duration.Record(caller, o.latency.Seconds(), metric.WithAttributes(
			telemetry.Present(telemetry.Session.Int64(int64(s.ID)), telemetry.Pool.String(s.Pool))...))
	}
	if root {
		t.finished(caller, job.Tier, o)
	}
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(telemetry.Label.String(string(o.Label)), telemetry.LatencyMS.Int64(o.latency.Milliseconds()))
	if o.Error != "" {
		span.SetAttributes(attribute.String("vouch.run.error", o.Error))
	}
	if o.Label == LabelError || o.Label == LabelTimeout {
		span.SetAttributes(semconv.ErrorTypeKey.String(string(o.Label)))
		span.SetStatus(codes.Error, o.Error)
	}
	span.End()
}

// finished counts o, a finished run of tier, by outcome and label, and a
// failure of its session (as outcome.health judges it from caller, the
// caller's context) by session.
func (t *engineTelemetry) finished(caller context.Context, tier Tier, o *outcome) {
	if t.runs.Enabled(caller) {
		outcome := "failed"
		switch {
		case o.Label == LabelCancelled:
			outcome = "cancelled"
		case o.Label != LabelError && o.Label != LabelTimeout:
			outcome = "answered"
		}
		t.runs.Add(caller, 1, metric.WithAttributes(telemetry.Present(telemetry.Tier.String(string(tier)),
			telemetry.Outcome.String(outcome), telemetry.Label.String(string(o.Label)))...))
	}
	if counts, failed := o.health(caller); counts && failed && t.errors.Enabled(caller) {
		t.errors.Add(caller, 1, metric.WithAttributes(
			telemetry.Session.Int64(int64(o.SessionID)), telemetry.Label.String(string(o.Label))))
	}
}
