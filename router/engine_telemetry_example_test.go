package router_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// The host picks the OpenTelemetry SDK and its exporters, and hands the
// providers to the engine; here spans are kept in memory and metrics read
// by hand.
func ExampleWithEngineTelemetry() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer tp.Shutdown(context.Background())
	defer mp.Shutdown(context.Background())

	w := routertest.Verdict(router.VerdictValid)
	e, err := router.NewEngine(routertest.Sessions(1, 3, w, w, w), router.WithEngineTelemetry(tp, mp))
	if err != nil {
		panic(err)
	}
	_, err = e.ValidateV3(context.Background(), &router.ValidateV3Request{
		ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"s"`)}},
		Consensus:    router.ConsensusRequest{Replicas: 3},
	})
	if err != nil {
		panic(err)
	}

	var names []string
	for _, s := range spans.GetSpans() {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	fmt.Println(names)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "vouch.router.runs.launched" {
			fmt.Println(m.Name, m.Data.(metricdata.Sum[int64]).DataPoints[0].Value)
		}
	}
	// Output:
	// [router.consensus router.replica router.replica router.replica]
	// vouch.router.runs.launched 3
}
