package router_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// observed is an SDK tracer and meter provider recording in memory.
type observed struct{ *telemetrytest.Recorder }

func newObserved(t *testing.T) *observed { return &observed{telemetrytest.New(t)} }

// named returns the ended spans called name.
func (o *observed) named(name string) tracetest.SpanStubs {
	var out tracetest.SpanStubs
	for _, s := range o.Spans.GetSpans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// metric returns the data of the metric called name.
func (o *observed) metric(t *testing.T, name string) metricdata.Aggregation {
	t.Helper()
	for _, sm := range o.Metrics(t).ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m.Data
			}
		}
	}
	t.Fatalf("no metric %s", name)
	return nil
}

// sums returns a counter's points as "attr=value,..." → value.
func sums(t *testing.T, data metricdata.Aggregation) map[string]int64 {
	t.Helper()
	s, ok := data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("metric is %T, want an int64 sum", data)
	}
	out := map[string]int64{}
	for _, p := range s.DataPoints {
		out[telemetrytest.Key(p.Attributes)] = p.Value
	}
	return out
}

func attrs(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

func TestEngine_telemetryValidateV3(t *testing.T) {
	o := newObserved(t)
	sessions := routertest.Sessions(1, 3,
		routertest.Verdict(router.VerdictValid), routertest.Verdict(router.VerdictValid), routertest.Fail(errors.New("down")))
	e := newEngine(t, sessions, router.WithEngineTelemetry(o.TracerProvider, o.MeterProvider))
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx := router.WithTraceID(context.Background(), traceID)
	req := validateV3(3, router.DisagreeReturnAll)
	req.Policy.Tier = router.TierSafe
	if _, err := e.ValidateV3(ctx, req); err != nil {
		t.Fatal(err)
	}

	calls := o.named("router.consensus")
	if len(calls) != 1 {
		t.Fatalf("%d router.consensus spans, want 1", len(calls))
	}
	call := calls[0]
	if got := call.SpanContext.TraceID().String(); got != traceID {
		t.Errorf("call span trace id = %s, want the context's %s", got, traceID)
	}
	if got := attrs(call.Attributes); got["vouch.replicas"] != "3" || got["vouch.tier"] != "safe" {
		t.Errorf("call span attributes = %v", got)
	}
	replicas := o.named("router.replica")
	type rep struct{ Session, Pool, Label, Replica string }
	var got []rep
	for _, s := range replicas {
		if s.Parent.SpanID() != call.SpanContext.SpanID() {
			t.Errorf("replica span's parent = %s, want the call span %s", s.Parent.SpanID(), call.SpanContext.SpanID())
		}
		a := attrs(s.Attributes)
		if a["vouch.task.id"] == "" || a["vouch.run.latency_ms"] == "" {
			t.Errorf("replica span lacks a task id or latency: %v", a)
		}
		got = append(got, rep{a["vouch.session.id"], a["vouch.session.pool"], a["vouch.run.label"], a["vouch.replica"]})
	}
	slices.SortFunc(got, func(a, b rep) int { return strings.Compare(a.Session, b.Session) })
	want := []rep{{"1", "pool-0", "VALID", "0"}, {"2", "pool-1", "VALID", "1"}, {"3", "pool-2", "ERROR", "2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replica spans (-want +got):\n%s", diff)
	}

	runs := sums(t, o.metric(t, "vouch.router.runs"))
	wantRuns := map[string]int64{
		"vouch.run.label=VALID,vouch.run.outcome=answered,vouch.tier=safe": 2,
		"vouch.run.label=ERROR,vouch.run.outcome=failed,vouch.tier=safe":   1,
	}
	if diff := cmp.Diff(wantRuns, runs); diff != "" {
		t.Errorf("vouch.router.runs (-want +got):\n%s", diff)
	}
	if got := sums(t, o.metric(t, "vouch.router.runs.launched")); got["vouch.tier=safe"] != 3 {
		t.Errorf("vouch.router.runs.launched = %v, want 3 for safe", got)
	}
	if got := sums(t, o.metric(t, "vouch.worker.errors")); !cmp.Equal(got, map[string]int64{"vouch.run.label=ERROR,vouch.session.id=3": 1}) {
		t.Errorf("vouch.worker.errors = %v, want one ERROR for session 3", got)
	}
	lat, ok := o.metric(t, "vouch.worker.duration").(metricdata.Histogram[float64])
	if !ok || len(lat.DataPoints) != 3 {
		t.Fatalf("vouch.worker.duration = %#v, want 3 sessions", lat)
	}
	agree, ok := o.metric(t, "vouch.consensus.agreement").(metricdata.Histogram[float64])
	if !ok || len(agree.DataPoints) != 1 || agree.DataPoints[0].Count != 1 || math.Abs(agree.DataPoints[0].Sum-1) > 1e-9 {
		// The failed replica casts no vote: the two answers agree fully.
		t.Errorf("vouch.consensus.agreement = %#v, want one call at 1", agree)
	}
}

func TestEngine_telemetryNoRecordingParent(t *testing.T) {
	// Replica spans are children of the call's span: when the sampler
	// drops the call, no replica span is started either.
	o := newObserved(t)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(o.Spans), sdktrace.WithSampler(sdktrace.NeverSample()))
	defer tp.Shutdown(context.Background())
	valid := routertest.Verdict(router.VerdictValid)
	e := newEngine(t, routertest.Sessions(1, 1, valid, valid, valid), router.WithEngineTelemetry(tp, o.MeterProvider))
	if _, err := e.ValidateV3(context.Background(), validateV3(3, router.DisagreeReturnAll)); err != nil {
		t.Fatal(err)
	}
	if n := len(o.Spans.GetSpans()); n != 0 {
		t.Errorf("%d spans recorded, want none", n)
	}
	if got := sums(t, o.metric(t, "vouch.router.runs.launched")); got[""] != 3 {
		t.Errorf("vouch.router.runs.launched = %v, want 3 without a tier", got)
	}
}

func TestEngine_telemetrySingleRun(t *testing.T) {
	o := newObserved(t)
	e := one(t, routertest.Verdict(router.VerdictInvalid), router.WithEngineTelemetry(o.TracerProvider, o.MeterProvider))
	_, err := e.ValidateV2(context.Background(), &router.ValidateV2Request{
		SessionID:    1,
		ValidateTask: validateV3(1, "").ValidateTask,
	})
	if err != nil {
		t.Fatal(err)
	}
	spans := o.named("router.replica")
	if len(spans) != 1 {
		t.Fatalf("%d router.replica spans, want 1", len(spans))
	}
	if a := attrs(spans[0].Attributes); a["vouch.session.id"] != "1" || a["vouch.run.label"] != "INVALID" {
		t.Errorf("span attributes = %v", a)
	}
	if got := sums(t, o.metric(t, "vouch.router.runs")); got["vouch.run.label=INVALID,vouch.run.outcome=answered"] != 1 {
		t.Errorf("vouch.router.runs = %v", got)
	}
}

func TestHTTPWorker_sendsReplicaSpanAsParent(t *testing.T) {
	o := newObserved(t)
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("traceparent")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"verdict":"VALID","confidence":1}`)
	}))
	defer srv.Close()
	e := one(t, router.HTTPWorker(srv.URL), router.WithEngineTelemetry(o.TracerProvider, o.MeterProvider))
	_, err := e.ValidateV2(context.Background(), &router.ValidateV2Request{SessionID: 1, ValidateTask: validateV3(1, "").ValidateTask})
	if err != nil {
		t.Fatal(err)
	}
	spans := o.named("router.replica")
	if len(spans) != 1 {
		t.Fatalf("%d replica spans, want 1", len(spans))
	}
	sc := spans[0].SpanContext
	if want, tp := "00-"+sc.TraceID().String()+"-"+sc.SpanID().String()+"-01", <-got; tp != want {
		t.Errorf("the worker got traceparent %q, want %q (the replica's span)", tp, want)
	}
}

func TestEngine_telemetryFailedRunIsError(t *testing.T) {
	// A run that fails marks its span as failed; one that answers does not.
	o := newObserved(t)
	fail := router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
		return nil, errors.New("worker down")
	})
	valid := routertest.Verdict(router.VerdictValid)
	e := newEngine(t, routertest.Sessions(1, 1, fail, valid, valid), router.WithEngineTelemetry(o.TracerProvider, o.MeterProvider))
	if _, err := e.ValidateV3(context.Background(), validateV3(3, router.DisagreeReturnAll)); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range o.named("router.replica") {
		got[attrs(s.Attributes)["vouch.run.label"]] = s.Status.Code.String() + " " + s.Status.Description
	}
	want := map[string]string{"ERROR": "Error worker down", "VALID": "Unset "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replica span status by label (-want +got):\n%s", diff)
	}
}
