package router_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// BenchmarkValidateV3_telemetry measures a version 3 validate on five
// instant workers with the default (global, no-op) providers, the
// baseline, and with an SDK sampling and recording every span (no
// exporter: ended spans are dropped) and aggregating every metric: what
// turning the instrumentation on costs.
//
//	go test -run='^$' -bench=BenchmarkValidateV3_telemetry -benchmem ./router
func BenchmarkValidateV3_telemetry(b *testing.B) {
	w := routertest.Verdict(router.VerdictValid)
	req := &router.ValidateV3Request{
		ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"s"`)}},
		Consensus:    router.ConsensusRequest{Replicas: 5},
	}
	run := func(b *testing.B, opts ...router.EngineOption) {
		e, err := router.NewEngine(routertest.Sessions(1, 5, w, w, w, w, w), opts...)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.ValidateV3(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("noop", func(b *testing.B) { run(b) })
	b.Run("sdk", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		defer tp.Shutdown(context.Background())
		defer mp.Shutdown(context.Background())
		run(b, router.WithEngineTelemetry(tp, mp))
	})
}

// BenchmarkNoopTelemetry measures what the instrumentation costs when no
// SDK is installed, the default: each iteration makes one call with the
// instrumentation switched off (the API's no-op providers, which make
// every hook return at once: the code before instrumentation) and one
// with the default global providers, in alternating order, and reports
// each one's median time and their ratio (noop/off). Interleaving call by
// call keeps a busy machine's drift out of the ratio.
//
//	go test -run='^$' -bench=BenchmarkNoopTelemetry -benchtime=20000x -count=6 ./router
func BenchmarkNoopTelemetry(b *testing.B) {
	offTP, offMP := tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider()
	w := routertest.Verdict(router.VerdictValid)

	b.Run("engine-v3", func(b *testing.B) {
		req := &router.ValidateV3Request{
			ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"s"`)}},
			Consensus:    router.ConsensusRequest{Replicas: 5},
		}
		engine := func(opts ...router.EngineOption) func() {
			e, err := router.NewEngine(routertest.Sessions(1, 5, w, w, w, w, w), opts...)
			if err != nil {
				b.Fatal(err)
			}
			return func() {
				if _, err := e.ValidateV3(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		}
		paired(b, engine(router.WithEngineTelemetry(offTP, offMP)), engine())
	})

	b.Run("loopback", func(b *testing.B) {
		req := &router.ValidateV3Request{
			ValidateTask: router.ValidateTask{
				RequestID: "bench",
				Claim:     router.Claim{Type: "summary", Output: json.RawMessage(`"Paris is the capital of France."`)},
				Policy:    router.ValidatePolicy{Tier: router.TierSafe, Rules: []string{"consistency"}},
			},
			Consensus: router.ConsensusRequest{Replicas: 3},
		}
		loopback := func(eopt router.EngineOption, hopt router.HandlerOption) func() {
			e, err := router.NewEngine(routertest.Sessions(1, 3, w, w, w), eopt)
			if err != nil {
				b.Fatal(err)
			}
			h, err := router.NewHandler(e, hopt, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{contractKey: "bench"})))
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(h)
			b.Cleanup(srv.Close)
			c, err := router.NewClient(srv.URL, router.WithAPIKey(contractKey), router.WithHTTPClient(srv.Client()))
			if err != nil {
				b.Fatal(err)
			}
			return func() {
				if _, err := c.ValidateV3(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		}
		paired(b,
			loopback(router.WithEngineTelemetry(offTP, offMP), router.WithHandlerTelemetry(offTP, offMP)),
			loopback(router.WithEngineTelemetry(nil, nil), router.WithHandlerTelemetry(nil, nil)))
	})
}

// paired runs off and noop once each per iteration, in alternating order,
// and reports the median time of each one's calls and the ratio of the
// medians (noop/off). Medians of single calls leave out the calls a busy
// machine preempted, which dominate means.
func paired(b *testing.B, off, noop func()) {
	var tOff, tNoop []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		first, second := off, noop
		if len(tOff)%2 == 1 {
			first, second = noop, off
		}
		t0 := time.Now()
		first()
		t1 := time.Now()
		second()
		t2 := time.Now()
		if len(tOff)%2 == 0 {
			tOff, tNoop = append(tOff, t1.Sub(t0)), append(tNoop, t2.Sub(t1))
		} else {
			tNoop, tOff = append(tNoop, t1.Sub(t0)), append(tOff, t2.Sub(t1))
		}
	}
	mOff, mNoop := median(tOff), median(tNoop)
	b.ReportMetric(float64(mOff.Nanoseconds()), "off-ns/call")
	b.ReportMetric(float64(mNoop.Nanoseconds()), "noop-ns/call")
	b.ReportMetric(float64(mNoop)/float64(mOff), "noop/off")
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}
