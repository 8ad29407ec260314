// Package telemetrytest records the spans and metrics of code under test
// with the OpenTelemetry SDK, in memory. It is for tests only: the
// library packages depend on the OpenTelemetry API alone, and only their
// tests import this package.
package telemetrytest

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A Recorder is a tracer provider and a meter provider whose spans and
// metrics stay in memory for a test to read.
type Recorder struct {
	// Spans holds every span ended so far.
	Spans *tracetest.InMemoryExporter
	// Reader collects the metrics on demand.
	Reader *sdkmetric.ManualReader
	// TracerProvider and MeterProvider are the providers to hand to the
	// code under test.
	TracerProvider *sdktrace.TracerProvider
	MeterProvider  *sdkmetric.MeterProvider
}

// New returns a Recorder that samples every span; opts are added to the
// tracer provider's options (a sampler, say). The providers are shut down
// when the test ends.
func New(t testing.TB, opts ...sdktrace.TracerProviderOption) *Recorder {
	t.Helper()
	r := &Recorder{Spans: tracetest.NewInMemoryExporter(), Reader: sdkmetric.NewManualReader()}
	r.TracerProvider = sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithSyncer(r.Spans)}, opts...)...)
	r.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.Reader))
	t.Cleanup(func() {
		_ = r.TracerProvider.Shutdown(context.Background())
		_ = r.MeterProvider.Shutdown(context.Background())
	})
	return r
}

// Metrics collects the metrics recorded so far.
func (r *Recorder) Metrics(t testing.TB) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// Points returns the points of every metric recorded so far, by metric
// name and then by their attributes written as "key=value" pairs in key
// order (an attribute.Set's own), joined by commas: the value of an int64
// counter's point, or the count of a histogram's. Metrics of other kinds
// are listed with no points.
func (r *Recorder) Points(t testing.TB) map[string]map[string]int64 {
	t.Helper()
	out := map[string]map[string]int64{}
	for _, sm := range r.Metrics(t).ScopeMetrics {
		for _, m := range sm.Metrics {
			points := map[string]int64{}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					points[Key(p.Attributes)] = p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					points[Key(p.Attributes)] = int64(p.Count)
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					points[Key(p.Attributes)] = int64(p.Count)
				}
			}
			out[m.Name] = points // empty for other kinds of metric
		}
	}
	return out
}

// Key writes a set of attributes as Points does.
func Key(set attribute.Set) string {
	kv := make([]string, 0, set.Len())
	for _, a := range set.ToSlice() {
		kv = append(kv, string(a.Key)+"="+a.Value.String())
	}
	return strings.Join(kv, ",")
}

// AllPoints returns the points of Points in one map, keyed by the
// metric's name, a space and the attributes' key.
func (r *Recorder) AllPoints(t testing.TB) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for name, points := range r.Points(t) {
		for attrs, n := range points {
			out[name+" "+attrs] = n
		}
	}
	return out
}
