package trust_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestService_telemetryRemoteCodeBounded: over a remote router that
// names a new problem code in each refusal, the failed calls count in
// vouch.trust.calls under one error.type, _OTHER, not one time series
// per code the remote made up; a code the project defines keeps its name.
func TestService_telemetryRemoteCodeBounded(t *testing.T) {
	var n atomic.Int64
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := problem.Code(fmt.Sprintf("made_up_%d", n.Add(1)))
		if n.Load() == 4 {
			code = problem.CodeUnavailable
		}
		w.Header().Set("Content-Type", problem.ContentType)
		w.WriteHeader(http.StatusConflict)
		fmt.Fprintf(w, `{"status":409,"title":"Conflict","code":%q,"detail":"no"}`, code)
	}))
	defer remote.Close()
	rc, err := router.NewClient(remote.URL, router.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	rec := telemetrytest.New(t)
	s, err := trust.New(rc, trust.WithTelemetry(rec.TracerProvider, rec.MeterProvider))
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := s.Call(context.Background(), request(trust.ModeValidation, trust.PolicyFast)); err == nil {
			t.Fatal("a call the remote router refused answered; want an error")
		}
	}
	got := map[string]int64{}
	for k, v := range rec.AllPoints(t) {
		if strings.HasPrefix(k, "vouch.trust.calls ") {
			got[k] = v
		}
	}
	want := map[string]int64{
		"vouch.trust.calls error.type=_OTHER,vouch.mode=validation,vouch.tier=fast":      3,
		"vouch.trust.calls error.type=unavailable,vouch.mode=validation,vouch.tier=fast": 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("vouch.trust.calls (-want +got):\n%s", diff)
	}
}
