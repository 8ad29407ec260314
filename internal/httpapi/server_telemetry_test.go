package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
)

func TestServer_telemetry(t *testing.T) {
	rec := telemetrytest.New(t)
	spans, tp, mp := rec.Spans, rec.TracerProvider, rec.MeterProvider
	srv := newServer(t, httpapi.Config{
		Name: "test",
		Endpoints: []httpapi.Endpoint{
			{Method: http.MethodPost, Path: "/api/v1/echo", Access: httpapi.Key, Prepare: echo},
			{Method: http.MethodPost, Path: "/api/v1/trial/echo", Access: httpapi.Trial, Prepare: echo},
		},
		TrialLimit:     httpapi.TrialLimit{Rate: 0.001, Burst: 1},
		TracerProvider: tp,
		MeterProvider:  mp,
	})

	const tp1 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	r := send(t, "POST", srv.URL+"/api/v1/echo", `{"a":1}`, "Authorization", "Bearer "+testKey, "traceparent", tp1,
		"Idempotency-Key", "k1")
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var got struct{ Trace string }
	if err := json.Unmarshal([]byte(r.body), &got); err != nil || got.Trace != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("the call saw trace %q (%v), want the request's", got.Trace, err)
	}
	send(t, "POST", srv.URL+"/api/v1/echo", `{"a":1}`, "Authorization", "Bearer "+testKey, "Idempotency-Key", "k1")
	send(t, "POST", srv.URL+"/api/v1/trial/echo", `{}`)
	send(t, "POST", srv.URL+"/api/v1/trial/echo", `{}`)
	send(t, "GET", srv.URL+"/nowhere", "")

	ended := spans.GetSpans()
	if len(ended) != 5 {
		t.Fatalf("%d spans, want one per request (5)", len(ended))
	}
	first := ended[0]
	if first.Name != "POST /api/v1/echo" || first.Parent.SpanID().String() != "00f067aa0ba902b7" ||
		first.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || !first.Parent.IsRemote() {
		t.Errorf("first span = %s, parent %s, trace %s: want POST /api/v1/echo, child of the traceparent's span",
			first.Name, first.Parent.SpanID(), first.SpanContext.TraceID())
	}

	points := rec.Points(t)
	want := map[string]map[string]int64{
		"http.server.request.duration": {
			"http.request.method=POST,http.response.status_code=200,http.route=/api/v1/echo,network.protocol.version=1.1,url.scheme=http":       2,
			"http.request.method=POST,http.response.status_code=200,http.route=/api/v1/trial/echo,network.protocol.version=1.1,url.scheme=http": 1,
			"http.request.method=POST,http.response.status_code=429,http.route=/api/v1/trial/echo,network.protocol.version=1.1,url.scheme=http": 1,
			"http.request.method=GET,http.response.status_code=404,network.protocol.version=1.1,url.scheme=http":                                1,
		},
		"vouch.calls": {
			"http.response.status_code=200,http.route=/api/v1/echo,vouch.variant=normal":      2,
			"http.response.status_code=200,http.route=/api/v1/trial/echo,vouch.variant=trial": 1,
			"http.response.status_code=429,http.route=/api/v1/trial/echo,vouch.variant=trial": 1,
			"http.response.status_code=404,vouch.variant=none":                                1,
		},
		"vouch.trial.decisions":       {"vouch.decision=allowed": 1, "vouch.decision=limited": 1},
		"vouch.idempotency.decisions": {"vouch.decision=executed": 1, "vouch.decision=replayed": 1},
	}
	if diff := cmp.Diff(want, points); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

// TestServer_telemetryBounded sends made-up methods and paths: the
// metrics record every unknown method as _OTHER and every path by the
// route pattern it matched (none for a 404), so a client that makes them
// up adds no time series; the span keeps the method sent in
// http.request.method_original.
func TestServer_telemetryBounded(t *testing.T) {
	rec, srv := echoServer(t)
	for i := range 20 {
		send(t, fmt.Sprintf("MADEUP%d", i), srv.URL+"/api/v1/echo", "")
		send(t, "GET", fmt.Sprintf("%s/nowhere/%d", srv.URL, i), "")
	}
	got := rec.Points(t)["http.server.request.duration"]
	want := map[string]int64{
		"http.request.method=_OTHER,http.response.status_code=405,http.route=/api/v1/echo,network.protocol.version=1.1,url.scheme=http": 20,
		"http.request.method=GET,http.response.status_code=404,network.protocol.version=1.1,url.scheme=http":                            20,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("http.server.request.duration (-want +got):\n%s", diff)
	}
	span := rec.Spans.GetSpans()[0]
	attrs := map[string]string{}
	for _, kv := range span.Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	if span.Name != "HTTP /api/v1/echo" || attrs["http.request.method"] != "_OTHER" || attrs["http.request.method_original"] != "MADEUP0" {
		t.Errorf("span %s %v: want HTTP /api/v1/echo, method _OTHER, method_original MADEUP0", span.Name, attrs)
	}
}

// TestServer_spanAttributes checks a server span's attributes against the
// HTTP semantic conventions' required and recommended ones, and that none
// is an empty string.
func TestServer_spanAttributes(t *testing.T) {
	rec, srv := echoServer(t)
	send(t, "POST", srv.URL+"/api/v1/echo?x=1", `{}`, "Authorization", "Bearer "+testKey, "User-Agent", "probe/1.0")
	send(t, "POST", srv.URL+"/api/v1/echo", `{}`, "Authorization", "Bearer "+testKey, "User-Agent", "")
	spans := rec.Spans.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	u, _ := url.Parse(srv.URL)
	for i, span := range spans {
		attrs := map[string]string{}
		for _, kv := range span.Attributes {
			if kv.Value.String() == "" {
				t.Errorf("span %d: attribute %s is empty", i, kv.Key)
			}
			attrs[string(kv.Key)] = kv.Value.String()
		}
		want := map[string]string{
			"http.request.method": "POST", "url.path": "/api/v1/echo", "url.scheme": "http",
			"server.address": u.Hostname(), "server.port": u.Port(), "network.protocol.version": "1.1",
			"http.response.status_code": "200", "http.route": "/api/v1/echo", "user_agent.original": "probe/1.0",
		}
		if i == 0 {
			want["http.response.status_code"] = "400" // the echo endpoint takes no query parameter
		}
		if i == 1 {
			delete(want, "user_agent.original")
		}
		for k, v := range want {
			if attrs[k] != v {
				t.Errorf("span %d: %s = %q, want %q (all: %v)", i, k, attrs[k], v, attrs)
			}
		}
		if attrs["network.peer.address"] != "127.0.0.1" || attrs["client.address"] != "127.0.0.1" {
			t.Errorf("span %d: network.peer.address %q, client.address %q; want 127.0.0.1", i, attrs["network.peer.address"], attrs["client.address"])
		}
	}
}

// TestInstrument serves a plain handler through Instrument on a mux: its
// requests get a server span under the caller's traceparent and are
// counted in the HTTP server metrics with the variant given, and an
// event stream still flushes through the wrapper.
func TestInstrument(t *testing.T) {
	rec := telemetrytest.New(t)
	mux := http.NewServeMux()
	mux.Handle("/mcp", httpapi.Instrument(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(http.Flusher); !ok {
			t.Error("the wrapped writer does not flush")
		}
		fmt.Fprint(w, trace.SpanContextFromContext(r.Context()).TraceID())
	}), rec.TracerProvider, rec.MeterProvider, "normal"))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	const tp1 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	r := send(t, "POST", srv.URL+"/mcp", `{}`, "traceparent", tp1)
	if r.body != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("the handler saw trace %q, want the traceparent's", r.body)
	}
	spans := rec.Spans.GetSpans()
	if len(spans) != 1 || spans[0].Name != "POST /mcp" || spans[0].Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Fatalf("spans %v: want one POST /mcp under the traceparent's span", spans)
	}
	points := rec.Points(t)
	if n := points["vouch.calls"]["http.response.status_code=200,http.route=/mcp,vouch.variant=normal"]; n != 1 {
		t.Errorf("vouch.calls = %v, want one /mcp call", points["vouch.calls"])
	}
	if n := points["http.server.request.duration"]["http.request.method=POST,http.response.status_code=200,http.route=/mcp,network.protocol.version=1.1,url.scheme=http"]; n != 1 {
		t.Errorf("http.server.request.duration = %v, want one /mcp request", points["http.server.request.duration"])
	}
}

// echoServer serves echo at POST /api/v1/echo, recording into rec.
func echoServer(t *testing.T) (*telemetrytest.Recorder, *httptest.Server) {
	t.Helper()
	rec := telemetrytest.New(t)
	return rec, newServer(t, httpapi.Config{
		Name:           "test",
		Endpoints:      []httpapi.Endpoint{{Method: http.MethodPost, Path: "/api/v1/echo", Access: httpapi.Key, Prepare: echo}},
		TracerProvider: rec.TracerProvider,
		MeterProvider:  rec.MeterProvider,
	})
}
