package router_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/vouchkit/vouch/router"
)

// TestHandler_tracestateReachesWorker: a request whose traceparent the
// Handler continues carries its tracestate on to the HTTPWorker's
// request, as W3C Trace Context asks of a vendor that receives one
// ("Vendors receiving a tracestate request header MUST send it to
// outgoing requests"), with telemetry recorded, with the global providers
// and with telemetry off. With telemetry off the library makes no span:
// the worker gets the caller's traceparent as it came, its parent id and
// its flags (a caller's "not sampled" stays so), as a vendor that records
// nothing passes it on.
func TestHandler_tracestateReachesWorker(t *testing.T) {
	const state = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
	o := newObserved(t)
	for _, tt := range []struct {
		mode   string
		parent string
	}{
		{"observed", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{"global", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{"off", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{"off", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"},
	} {
		parent := tt.parent
		got := make(chan http.Header, 1)
		worker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got <- r.Header.Clone()
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"verdict":"VALID","confidence":1}`)
		}))
		var engineOpts []router.EngineOption
		handlerOpts := []router.HandlerOption{router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"}))}
		switch tt.mode {
		case "observed":
			engineOpts = append(engineOpts, router.WithEngineTelemetry(o.TracerProvider, o.MeterProvider))
			handlerOpts = append(handlerOpts, router.WithHandlerTelemetry(o.TracerProvider, o.MeterProvider))
		case "off":
			tp, mp := tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider()
			engineOpts = append(engineOpts, router.WithEngineTelemetry(tp, mp))
			handlerOpts = append(handlerOpts, router.WithHandlerTelemetry(tp, mp))
		}
		e := newEngine(t, []router.Session{{ID: 1, Worker: router.HTTPWorker(worker.URL)}}, engineOpts...)
		h, err := router.NewHandler(e, handlerOpts...)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		body, err := json.Marshal(validateV3(1, ""))
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v3/validate", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer k")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("traceparent", parent)
		req.Header.Set("tracestate", state)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		srv.Close()
		worker.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", tt.mode, resp.StatusCode)
		}
		h1 := <-got
		if tp := h1.Get("traceparent"); len(tp) != len(parent) || tp[:36] != parent[:36] || tt.mode == "off" && tp != parent {
			t.Errorf("%s, caller's %s: the worker got traceparent %q, want one in trace %s (with telemetry off, the caller's)", tt.mode, parent, tp, parent[3:35])
		}
		if ts := h1.Get("tracestate"); ts != state {
			t.Errorf("%s, caller's %s: the worker got tracestate %q, want the caller's %q", tt.mode, parent, ts, state)
		}
	}
}
