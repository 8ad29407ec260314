package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
)

// TestServer_telemetryAbortedHandler: a handler that aborts its response
// (panics with http.ErrAbortHandler) still ends its request's span as
// failed and records the request's duration.
func TestServer_telemetryAbortedHandler(t *testing.T) {
	rec := telemetrytest.New(t)
	srv := newServer(t, httpapi.Config{
		Name: "test",
		Endpoints: []httpapi.Endpoint{{Method: http.MethodGet, Path: "/api/v1/abort", Access: httpapi.Public,
			Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })}},
		TracerProvider: rec.TracerProvider,
		MeterProvider:  rec.MeterProvider,
	})
	if resp, err := http.Get(srv.URL + "/api/v1/abort"); err == nil {
		resp.Body.Close()
		t.Fatalf("an aborted response arrived: %s", resp.Status)
	}
	var got []string
	for _, s := range rec.Spans.GetSpans() {
		got = append(got, s.Name+" "+s.Status.Code.String())
	}
	if diff := cmp.Diff([]string{"GET /api/v1/abort Error"}, got); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
	want := map[string]int64{
		"http.server.request.duration error.type=aborted,http.request.method=GET,http.route=/api/v1/abort,network.protocol.version=1.1,url.scheme=http": 1,
		"vouch.calls http.route=/api/v1/abort,vouch.variant=public":                                                                                     1,
	}
	if diff := cmp.Diff(want, rec.AllPoints(t)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}
