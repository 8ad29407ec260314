package httpapi

import (
	"context"
	"net"
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
	"github.com/vouchkit/vouch/internal/traceparent"
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
	other    string            // the variant of any other pattern
	proxies  proxies           // Config.TrustedProxies and TrustUnixProxy, for client.address
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
		other:    "none",
		proxies:  cfg.proxies(),
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
// header names, with the request attributes of the HTTP semantic
// conventions that are known before it is served.
func (t *serverTelemetry) start(ctx context.Context, r *http.Request) (context.Context, served) {
	if t == nil {
		return ctx, served{}
	}
	if _, ok := traceparent.Of(r.Header); ok {
		ctx = telemetry.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	method, _ := requestMethod(r)
	name := method
	if method == otherMethod {
		name = "HTTP" // the span name of an unknown method
	}
	ctx, span := telemetry.Start(ctx, t.tracer, name, t.server...)
	if span.IsRecording() {
		span.SetAttributes(requestAttributes(r)...)
		if client := clientAddr(r, t.proxies); client.IsValid() {
			span.SetAttributes(semconv.ClientAddress(client.String()))
		}
	}
	return ctx, served{span: span, began: time.Now()}
}

// end ends the span of r, answered with status, and records its duration
// and its call by route, variant and status. It runs after the mux, which
// set r.Pattern.
func (t *serverTelemetry) end(ctx context.Context, sv served, r *http.Request, status int) {
	errType := ""
	if status >= 500 {
		errType = strconv.Itoa(status)
	}
	t.finish(ctx, sv, r, status, errType)
}

// abort is end for a request whose handler cut its response short
// (http.ErrAbortHandler): error.type is "aborted", and status, the
// status sent before, is 0 when none was.
func (t *serverTelemetry) abort(ctx context.Context, sv served, r *http.Request, status int) {
	t.finish(ctx, sv, r, status, "aborted")
}

// finish ends the span of r and records its duration and call, with
// error.type set to errType when it is not "" and the response status
// when it is not 0.
func (t *serverTelemetry) finish(ctx context.Context, sv served, r *http.Request, status int, errType string) {
	if t == nil {
		return
	}
	route := routeOf(r)
	method, _ := requestMethod(r)
	if sv.span.IsRecording() {
		if route != "" {
			if method == otherMethod {
				sv.span.SetName("HTTP " + route)
			} else {
				sv.span.SetName(method + " " + route)
			}
			sv.span.SetAttributes(semconv.HTTPRoute(route))
		}
		if status != 0 {
			sv.span.SetAttributes(semconv.HTTPResponseStatusCode(status))
		}
		if errType != "" {
			sv.span.SetAttributes(semconv.ErrorTypeKey.String(errType))
			if status >= 500 {
				sv.span.SetStatus(codes.Error, http.StatusText(status))
			} else {
				sv.span.SetStatus(codes.Error, errType)
			}
		}
	}
	sv.span.End()
	if t.duration.Enabled(ctx) {
		attrs := make([]attribute.KeyValue, 0, 6)
		attrs = append(attrs, semconv.HTTPRequestMethodKey.String(method),
			semconv.URLScheme(scheme(r)), semconv.NetworkProtocolVersion(protocolVersion(r)))
		if status != 0 {
			attrs = append(attrs, semconv.HTTPResponseStatusCode(status))
		}
		if route != "" {
			attrs = append(attrs, semconv.HTTPRoute(route))
		}
		if errType != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
		}
		t.duration.Inst().Record(ctx, time.Since(sv.began).Seconds(), metric.WithAttributes(attrs...))
	}
	if t.calls.Enabled(ctx) {
		variant, ok := t.variants[r.Pattern]
		if !ok {
			variant = t.other
		}
		attrs := make([]attribute.KeyValue, 0, 3)
		attrs = append(attrs, telemetry.Variant.String(variant))
		if status != 0 {
			attrs = append(attrs, semconv.HTTPResponseStatusCode(status))
		}
		if route != "" {
			attrs = append(attrs, semconv.HTTPRoute(route))
		}
		t.calls.Add(ctx, 1, metric.WithAttributes(attrs...))
	}
}

// otherMethod is how the semantic conventions record a method they do
// not list: a client that makes up methods makes no new time series.
const otherMethod = "_OTHER"

// requestMethod returns the method of r as the semantic conventions
// record it, the method itself or _OTHER, and whether it was known.
func requestMethod(r *http.Request) (string, bool) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace, "QUERY":
		return r.Method, true
	}
	return otherMethod, false
}

// routeOf returns the route pattern the mux matched for r, without its
// method, or "" for none (the catch-all "/" that answers 404): the code's
// patterns, never the raw path a client sent.
func routeOf(r *http.Request) string {
	route := r.Pattern
	if i := strings.IndexByte(route, ' '); i >= 0 {
		route = route[i+1:]
	}
	if route == "/" {
		return ""
	}
	return route
}

// requestAttributes returns the span attributes of r that the HTTP
// semantic conventions require or recommend for a server span, leaving
// out those r does not have (no attribute is an empty string).
func requestAttributes(r *http.Request) []attribute.KeyValue {
	method, known := requestMethod(r)
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, semconv.HTTPRequestMethodKey.String(method), semconv.URLScheme(scheme(r)),
		semconv.NetworkProtocolVersion(protocolVersion(r)))
	if !known {
		attrs = append(attrs, semconv.HTTPRequestMethodOriginal(r.Method))
	}
	if r.URL != nil && r.URL.Path != "" {
		attrs = append(attrs, semconv.URLPath(r.URL.Path))
	}
	if host, port := hostPort(r.Host); host != "" {
		attrs = append(attrs, semconv.ServerAddress(host))
		if port > 0 {
			attrs = append(attrs, semconv.ServerPort(port))
		}
	}
	if ua := r.UserAgent(); ua != "" {
		attrs = append(attrs, semconv.UserAgentOriginal(ua))
	}
	if host, port := hostPort(r.RemoteAddr); host != "" {
		attrs = append(attrs, semconv.NetworkPeerAddress(host))
		if port > 0 {
			attrs = append(attrs, semconv.NetworkPeerPort(port))
		}
	}
	return attrs
}

// hostPort splits "host:port", "[v6]:port" or a bare host; port is 0
// when absent or not a number.
func hostPort(hp string) (string, int) {
	host, p, err := net.SplitHostPort(hp)
	if err != nil {
		return strings.Trim(hp, "[]"), 0
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		port = 0
	}
	return host, port
}

// protocolVersion is network.protocol.version: "1.1", "2", "3".
func protocolVersion(r *http.Request) string {
	if r.ProtoMajor >= 2 {
		return strconv.Itoa(r.ProtoMajor)
	}
	return strconv.Itoa(r.ProtoMajor) + "." + strconv.Itoa(r.ProtoMinor)
}

// Instrument serves next with the server span and the HTTP server
// metrics of a [Server]'s requests (http.server.request.duration, and
// vouch.calls with vouch.variant set to variant: normal, trial, x402 or
// public), for a handler mounted on a mux beside a Server's endpoints,
// such as an MCP endpoint, so that its traffic is counted and traced as
// theirs is: the route is the pattern the mux matched, the span is a
// child of the request's traceparent. With no telemetry (both providers
// the API's no-op ones) it returns next.
func Instrument(next http.Handler, tp trace.TracerProvider, mp metric.MeterProvider, variant string) http.Handler {
	t := newServerTelemetry(&Config{TracerProvider: tp, MeterProvider: mp})
	if t == nil {
		return next
	}
	t.other = variant
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, sv := t.start(r.Context(), r)
		sw := &flushingWriter{statusWriter{ResponseWriter: w}}
		defer func() {
			status := sw.status
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					t.abort(ctx, sv, r, sw.status)
				} else {
					t.end(ctx, sv, r, http.StatusInternalServerError)
				}
				panic(v)
			}
			if !sw.wrote {
				status = http.StatusOK
			}
			t.end(ctx, sv, r, status)
		}()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}

// flushingWriter is a statusWriter that streams: an MCP server flushes
// its event stream.
type flushingWriter struct{ statusWriter }

// Flush sends what was written so far, when the underlying writer can.
func (w *flushingWriter) Flush() {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
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
