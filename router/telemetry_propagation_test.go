package router_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/router"
)

// TestClient_traceReachesWorker follows one trace over loopback HTTP from
// a caller's span through the Client, the Handler's server span, the
// Engine's consensus and replica spans, to the traceparent an HTTPWorker
// sends its worker: each hop is the child of the one before.
func TestClient_traceReachesWorker(t *testing.T) {
	o := newObserved(t)
	got := make(chan string, 3)
	worker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("traceparent")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"verdict":"VALID","confidence":1}`)
	}))
	defer worker.Close()
	hw := router.HTTPWorker(worker.URL)
	e := newEngine(t, []router.Session{{ID: 1, Worker: hw}}, router.WithEngineTelemetry(o.TracerProvider, o.MeterProvider))
	h, err := router.NewHandler(e, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"})),
		router.WithHandlerTelemetry(o.TracerProvider, o.MeterProvider))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, err := router.NewClient(srv.URL, router.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, caller := o.TracerProvider.Tracer("test").Start(context.Background(), "caller")
	if _, err := c.ValidateV3(ctx, validateV3(1, "")); err != nil {
		t.Fatal(err)
	}
	caller.End()

	parent := map[string]trace.SpanID{}
	var replica trace.SpanContext
	ids := map[trace.SpanID]string{}
	for _, s := range o.Spans.GetSpans() {
		if s.SpanContext.TraceID() != caller.SpanContext().TraceID() {
			t.Errorf("span %s is in trace %s, want the caller's", s.Name, s.SpanContext.TraceID())
		}
		ids[s.SpanContext.SpanID()] = s.Name
		parent[s.Name] = s.Parent.SpanID()
		if s.Name == "router.replica" {
			replica = s.SpanContext
		}
	}
	chain := map[string]string{}
	for name, p := range parent {
		chain[name] = ids[p]
	}
	want := map[string]string{
		"caller":                "",
		"POST /api/v3/validate": "caller",
		"router.consensus":      "POST /api/v3/validate",
		"router.replica":        "router.consensus",
	}
	if diff := cmp.Diff(want, chain); diff != "" {
		t.Errorf("each span's parent (-want +got):\n%s", diff)
	}
	if tp, want := <-got, "00-"+replica.TraceID().String()+"-"+replica.SpanID().String()+"-01"; tp != want {
		t.Errorf("the worker got traceparent %q, want %q (the replica's span)", tp, want)
	}
}
