package telemetry_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/vouchkit/vouch/internal/telemetry"
	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/internal/traceparent"
)

func newTracer(t *testing.T) (trace.Tracer, *tracetest.InMemoryExporter) {
	t.Helper()
	rec := telemetrytest.New(t)
	return rec.TracerProvider.Tracer("test"), rec.Spans
}

func TestStart_joinsCarriedTrace(t *testing.T) {
	tr, _ := newTracer(t)
	const id = "0af7651916cd43dd8448eb211c80319c"
	ctx, span := telemetry.Start(traceparent.With(context.Background(), id), tr, "s")
	defer span.End()
	if got := span.SpanContext().TraceID().String(); got != id {
		t.Errorf("span trace id = %s, want the carried %s", got, id)
	}
	if got := traceparent.From(ctx); got != id {
		t.Errorf("carried trace id = %s, want %s", got, id)
	}
}

// TestStart_carriedParent: a span started where the context carries the
// parent a request's traceparent named, but no span, is that parent's
// child, sampled or not as the caller flagged it (the SDK's default
// sampler follows a remote parent), not the child of a made-up sampled
// span.
func TestStart_carriedParent(t *testing.T) {
	const id, parent = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	for _, flags := range []byte{0, traceparent.FlagSampled, traceparent.FlagRandom, traceparent.FlagSampled | traceparent.FlagRandom} {
		tr, spans := newTracer(t)
		p := traceparent.Parent{TraceID: id, ParentID: parent, Flags: flags}
		ctx, span := telemetry.Start(traceparent.WithParent(context.Background(), p), tr, "s")
		span.End()
		sc := span.SpanContext()
		type got struct {
			Trace     string
			Flags     trace.TraceFlags
			Recording bool
			Carried   string
		}
		want := got{id, trace.TraceFlags(flags), p.Sampled(), id}
		if diff := cmp.Diff(want, got{sc.TraceID().String(), sc.TraceFlags(), len(spans.GetSpans()) == 1, traceparent.From(ctx)}); diff != "" {
			t.Errorf("flags %02x (-want +got):\n%s", flags, diff)
		}
		if ended := spans.GetSpans(); len(ended) == 1 && ended[0].Parent.SpanID().String() != parent {
			t.Errorf("flags %02x: parent %s, want the carried %s", flags, ended[0].Parent.SpanID(), parent)
		}
	}
}

func TestStart_rootCarriesItsTrace(t *testing.T) {
	tr, _ := newTracer(t)
	ctx, span := telemetry.Start(context.Background(), tr, "s")
	defer span.End()
	if got, want := traceparent.From(ctx), span.SpanContext().TraceID().String(); got != want {
		t.Errorf("carried trace id = %q, want the root span's %s", got, want)
	}
	tp := telemetry.Traceparent(ctx, traceparent.From(ctx))
	_, parent, ok := traceparent.Parse(tp)
	if !ok || parent != span.SpanContext().SpanID().String() {
		t.Errorf("Traceparent = %q, want the span %s as parent", tp, span.SpanContext().SpanID())
	}
}

func TestStart_noopLeavesContext(t *testing.T) {
	ctx, span := telemetry.Start(context.Background(), noop.NewTracerProvider().Tracer("t"), "s")
	if span.IsRecording() || traceparent.From(ctx) != "" {
		t.Errorf("a no-op span recorded or set a trace id (%q)", traceparent.From(ctx))
	}
	// Without a span in the trace, the traceparent has a fresh parent id.
	const id = "0af7651916cd43dd8448eb211c80319c"
	if got, _, ok := traceparent.Parse(telemetry.Traceparent(ctx, id)); !ok || got != id {
		t.Errorf("Traceparent without a span = %q", telemetry.Traceparent(ctx, id))
	}
}

// TestLibraryLinksAPIOnly checks that no library package links the
// OpenTelemetry SDK or an exporter: hosts choose those.
func TestLibraryLinksAPIOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	all, err := exec.Command("go", "list", telemetry.ScopePrefix+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, all)
	}
	args := []string{"list", "-deps"}
	for _, p := range strings.Fields(string(all)) {
		// Programs choose the SDK; libraries do not. telemetrytest is
		// imported by tests only.
		if !strings.Contains(p, "/examples/") && !strings.HasSuffix(p, "/telemetrytest") {
			args = append(args, p)
		}
	}
	if len(args) < 10 {
		t.Fatalf("go list found only %v", args[2:])
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "go.opentelemetry.io/otel/sdk") || strings.HasPrefix(dep, "go.opentelemetry.io/otel/exporters") ||
			strings.HasPrefix(dep, "github.com/prometheus/") {
			t.Errorf("a library package links %s", dep)
		}
	}
	if !strings.Contains(string(out), "go.opentelemetry.io/otel/metric\n") {
		t.Errorf("go list shows no go.opentelemetry.io/otel/metric: the check lists the wrong packages\n%s", out)
	}
}

func TestOff(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	for _, tc := range []struct {
		name string
		tp   trace.TracerProvider
		mp   metric.MeterProvider
		want bool
	}{
		{"both no-op", noop.NewTracerProvider(), metricnoop.NewMeterProvider(), true},
		{"nil: the global ones", nil, nil, false},
		{"traces on", tp, metricnoop.NewMeterProvider(), false},
		{"metrics from the global provider", noop.NewTracerProvider(), nil, false},
	} {
		if got := telemetry.Off(tc.tp, tc.mp); got != tc.want {
			t.Errorf("%s: Off = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPresent(t *testing.T) {
	got := telemetry.Present(telemetry.Tier.String(""), telemetry.Replicas.Int(0), telemetry.Mode.String("validation"),
		telemetry.PaymentReason.String(""), telemetry.Signed.Bool(false))
	want := []attribute.KeyValue{telemetry.Replicas.Int(0), telemetry.Mode.String("validation"), telemetry.Signed.Bool(false)}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b attribute.KeyValue) bool { return a == b })); diff != "" {
		t.Errorf("Present (-want +got):\n%s", diff)
	}
}
