package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"

	promclient "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelruntime "go.opentelemetry.io/contrib/instrumentation/runtime"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// serviceName names the server in its metrics' target_info and in its
// traces.
const serviceName = "vouch-server"

// observability is the server's OpenTelemetry setup: a meter provider
// whose metrics, the Go runtime's included, the Prometheus exporter
// serves at /metrics on -debug-addr and -metrics-addr, and, when
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is
// set, a tracer provider that exports spans over OTLP/HTTP as the
// exporter's standard variables say.
// Nothing is installed globally: the providers are handed to the
// library's options, so that run can be called twice in a process.
type observability struct {
	meters  *sdkmetric.MeterProvider
	tracers *sdktrace.TracerProvider // nil without an OTLP endpoint
	scrape  http.Handler             // /metrics
}

// newObservability builds the providers; getenv reads the environment.
func newObservability(ctx context.Context, getenv func(string) string) (*observability, error) {
	if err := checkOTLP(getenv); err != nil {
		return nil, err
	}
	res := resource.NewSchemaless(semconv.ServiceName(serviceName))
	reg := promclient.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	o := &observability{
		meters: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(res),
			sdkmetric.WithView(goroutinesView)),
		scrape: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
	}
	// The runtime's metrics (go.memory.used, go.goroutine.count, ...) are
	// read from runtime/metrics when /metrics is scraped: no goroutine.
	runtimeMeters := schemaMeters{o.meters, metric.WithSchemaURL(semconv.SchemaURL)}
	if err := otelruntime.Start(otelruntime.WithMeterProvider(runtimeMeters)); err != nil {
		return nil, errors.Join(err, o.meters.Shutdown(ctx))
	}
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
		spans, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, errors.Join(err, o.meters.Shutdown(ctx))
		}
		o.tracers = sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans), sdktrace.WithResource(res))
	}
	return o, nil
}

// checkOTLP refuses, when an endpoint is set, the exporter's variables
// that it would not use as given: an endpoint without an http or https scheme and a host (the
// exporter reads "localhost:4318" as a path, posting to https:///v1/traces,
// and other schemes as https), or a protocol other than OTLP/HTTP with
// protobuf, the only one this server exports over. The endpoint is not
// quoted: its user info may hold a password.
func checkOTLP(getenv func(string) string) error {
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return nil // no traces
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		v := getenv(name)
		if v == "" {
			continue
		}
		if u, err := url.Parse(v); err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("%s: want an http or https URL with a host, such as http://127.0.0.1:4318", name)
		}
	}
	name := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" // the traces' own beats the general one
	if getenv(name) == "" {
		name = "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	if v := getenv(name); v != "" && v != "http/protobuf" {
		return fmt.Errorf("%s %q: this server exports traces over OTLP/HTTP only: leave it unset or give http/protobuf", name, v)
	}
	return nil
}

// goroutinesView exports the runtime's go.goroutine.count as
// go.goroutines (go_goroutines, the name Prometheus's own Go collector
// gives it): a Prometheus name ending in _count that is not a
// histogram's or a summary's count fails promtool check metrics.
var goroutinesView = sdkmetric.NewView(sdkmetric.Instrument{Name: "go.goroutine.count"},
	sdkmetric.Stream{Name: "go.goroutines"})

// schemaMeters is a MeterProvider whose meters name the schema of the
// semantic conventions their instruments follow, for instrumentation
// that names none (the runtime's: its metrics are those of semconv
// v1.43.0, go.*), so that no series has an empty otel_scope_schema_url.
type schemaMeters struct {
	metric.MeterProvider
	schema metric.MeterOption
}

// Meter returns the meter name of the embedded provider, with the schema.
func (p schemaMeters) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	return p.MeterProvider.Meter(name, append(opts, p.schema)...)
}

// tracerProvider returns the provider of the library's spans: the OTLP
// one, or nil (the global no-op) when traces are not exported.
func (o *observability) tracerProvider() trace.TracerProvider {
	if o.tracers == nil {
		return nil
	}
	return o.tracers
}

// meterProvider returns the provider of the library's metrics.
func (o *observability) meterProvider() metric.MeterProvider { return o.meters }

// close flushes and stops the providers.
func (o *observability) close() {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if o.tracers != nil {
		_ = o.tracers.Shutdown(ctx)
	}
	_ = o.meters.Shutdown(ctx)
}

// debugHandler serves the debug listener: /debug/vars (expvar) and
// /metrics (Prometheus text format).
func (s *server) debugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", s.metrics.debugHandler()) // /debug/vars
	mux.Handle("GET /metrics", s.obs.scrape)
	return mux
}

// metricsHandler serves the -metrics-addr listener: /metrics alone.
func (s *server) metricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.obs.scrape)
	return mux
}

// listenMetrics listens on cfg.metricsAddr when it is set, and writes the
// address it got back into cfg for the banner (a port 0 picks a free one).
func listenMetrics(cfg *config) (net.Listener, error) {
	if cfg.metricsAddr == "" {
		return nil, nil
	}
	ln, err := listen("-metrics-addr", cfg.metricsAddr)
	if err != nil {
		return nil, err
	}
	cfg.metricsAddr = ln.Addr().String()
	return ln, nil
}
