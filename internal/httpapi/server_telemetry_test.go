package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

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
			"http.request.method=POST,http.response.status_code=200,http.route=/api/v1/echo,url.scheme=http":       2,
			"http.request.method=POST,http.response.status_code=200,http.route=/api/v1/trial/echo,url.scheme=http": 1,
			"http.request.method=POST,http.response.status_code=429,http.route=/api/v1/trial/echo,url.scheme=http": 1,
			"http.request.method=GET,http.response.status_code=404,url.scheme=http":                                1,
		},
		"vouch.calls": {
			"http.response.status_code=200,http.route=/api/v1/echo,vouch.variant=normal":      2,
			"http.response.status_code=200,http.route=/api/v1/trial/echo,vouch.variant=trial": 1,
			"http.response.status_code=429,http.route=/api/v1/trial/echo,vouch.variant=trial": 1,
			"http.response.status_code=404,http.route=,vouch.variant=none":                    1,
		},
		"vouch.trial.decisions":       {"vouch.decision=allowed": 1, "vouch.decision=limited": 1},
		"vouch.idempotency.decisions": {"vouch.decision=executed": 1, "vouch.decision=replayed": 1},
	}
	if diff := cmp.Diff(want, points); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}
