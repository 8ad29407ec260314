package router_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vouchkit/vouch/router"
)

// TestHandler_tracestateReachesWorker: a request whose traceparent the
// Handler continues carries its tracestate on to the HTTPWorker's
// request, as W3C Trace Context asks of a vendor that receives one
// ("Vendors receiving a tracestate request header MUST send it to
// outgoing requests"), with telemetry recorded and with the global
// providers alike.
func TestHandler_tracestateReachesWorker(t *testing.T) {
	const (
		parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		state  = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
	)
	o := newObserved(t)
	for _, observed := range []bool{true, false} {
		got := make(chan http.Header, 1)
		worker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got <- r.Header.Clone()
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"verdict":"VALID","confidence":1}`)
		}))
		var engineOpts []router.EngineOption
		handlerOpts := []router.HandlerOption{router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"}))}
		if observed {
			engineOpts = append(engineOpts, router.WithEngineTelemetry(o.TracerProvider, o.MeterProvider))
			handlerOpts = append(handlerOpts, router.WithHandlerTelemetry(o.TracerProvider, o.MeterProvider))
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
			t.Fatalf("observed %v: status %d", observed, resp.StatusCode)
		}
		h1 := <-got
		if tp := h1.Get("traceparent"); len(tp) != len(parent) || tp[:36] != parent[:36] {
			t.Errorf("observed %v: the worker got traceparent %q, want one in trace %s", observed, tp, parent[3:35])
		}
		if ts := h1.Get("tracestate"); ts != state {
			t.Errorf("observed %v: the worker got tracestate %q, want the caller's %q", observed, ts, state)
		}
	}
}
